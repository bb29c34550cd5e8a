import { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '@podmin/data-access-object-store';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import type { RegistryStore } from '../registry.ports';
import { LocalDirectoryRegistryStore } from './local-directory.store';
import { S3RegistryStore } from './s3.store';

/**
 * The bucket adapter for a configuration: the directory for `local`, S3 for `aws` (the
 * regional dual-stack endpoint, or `AWS_ENDPOINT_URL_S3` with path-style addressing).
 */
export function createRegistryStore(
  config: Pick<AgentProcessConfig, 'provider' | 'bucket' | 'region'>,
  env: Readonly<Record<string, string | undefined>>,
): RegistryStore {
  if (config.provider === 'local') {
    return new LocalDirectoryRegistryStore(config.bucket);
  }
  const endpoint = env['AWS_ENDPOINT_URL_S3'] || undefined;
  const client =
    endpoint === undefined
      ? new S3Client({ region: config.region, useDualstackEndpoint: true })
      : createS3Client({ region: config.region, endpoint });
  return new S3RegistryStore(client, config.bucket);
}
