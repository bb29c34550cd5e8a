import { openObjectStore } from '@podmin/data-access-object-store';
import type { RegistryConfig } from '../registry.config';
import type { RegistryStore } from '../registry.ports';

/**
 * The shared bucket store for a configuration, opened as every agent process opens it: the
 * directory for `local`, S3 for `aws` on the regional dual-stack endpoint, or on
 * `AWS_ENDPOINT_URL_S3` with path-style addressing.
 */
export function createRegistryStore(config: RegistryConfig): RegistryStore {
  return openObjectStore({
    provider: config.provider,
    bucket: config.bucket,
    region: config.region ?? 'us-east-1',
    endpoint: config.s3Endpoint,
    dualStack: true,
  });
}
