import type { S3Client } from '@aws-sdk/client-s3';
import { LocalDirectoryObjectStore, S3ObjectStore } from '@podmin/data-access-object-store';
import type { RegistryConfig } from '../registry.config';
import { createRegistryStore } from './create-store';

const base: RegistryConfig = {
  provider: 'aws',
  bucket: 'podmin-demo',
  region: 'eu-west-1',
  cluster: 'test',
  listen: { host: '127.0.0.1', port: 0 },
  s3Endpoint: undefined,
};

/** The S3 client inside a store built for the registry. */
function clientOf(store: unknown): S3Client {
  expect(store).toBeInstanceOf(S3ObjectStore);
  return (store as { client: S3Client }).client;
}

describe('createRegistryStore', () => {
  it('opens the shared directory store for the local provider', () => {
    expect(
      createRegistryStore({ ...base, provider: 'local', bucket: '/srv/bucket' }),
    ).toBeInstanceOf(LocalDirectoryObjectStore);
  });

  it('opens the shared S3 store on the regional dual-stack endpoint', async () => {
    const client = clientOf(createRegistryStore(base));
    try {
      expect(await client.config.useDualstackEndpoint()).toBe(true);
      expect(await client.config.region()).toBe('eu-west-1');
    } finally {
      client.destroy();
    }
  });

  it('uses AWS_ENDPOINT_URL_S3 with path-style addressing instead', async () => {
    const client = clientOf(createRegistryStore({ ...base, s3Endpoint: 'http://127.0.0.1:4566' }));
    try {
      expect(await client.config.useDualstackEndpoint()).toBe(false);
      expect(client.config.forcePathStyle).toBe(true);
      expect(await client.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    } finally {
      client.destroy();
    }
  });
});
