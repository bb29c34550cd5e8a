import { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '@podmin/data-access-object-store';
import type { RegistryConfig } from '../registry.config';
import type { RegistryStore } from '../registry.ports';
import { LocalDirectoryRegistryStore } from './local-directory.store';
import { S3RegistryStore } from './s3.store';

/**
 * The bucket adapter for a configuration: the directory for `local`, S3 for `aws` (the
 * regional dual-stack endpoint, or `AWS_ENDPOINT_URL_S3` with path-style addressing).
 */
export function createRegistryStore(config: RegistryConfig): RegistryStore {
  if (config.provider === 'local') {
    return new LocalDirectoryRegistryStore(config.bucket);
  }
  const region = config.region ?? 'us-east-1';
  const client =
    config.s3Endpoint === undefined
      ? new S3Client({ region, useDualstackEndpoint: true })
      : createS3Client({ region, endpoint: config.s3Endpoint });
  return new S3RegistryStore(client, config.bucket);
}
