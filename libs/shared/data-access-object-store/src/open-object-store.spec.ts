import type { S3Client } from '@aws-sdk/client-s3';
import { LocalDirectoryObjectStore } from './local-directory-object-store';
import { openObjectStore } from './open-object-store';
import { S3ObjectStore } from './s3-object-store';

/** The S3 client inside an opened store. */
function clientOf(store: unknown): S3Client {
  expect(store).toBeInstanceOf(S3ObjectStore);
  return (store as { client: S3Client }).client;
}

describe('openObjectStore', () => {
  it('opens a directory store for the local provider', () => {
    const store = openObjectStore({ provider: 'local', bucket: '/srv/bucket', region: 'local' });
    expect(store).toBeInstanceOf(LocalDirectoryObjectStore);
  });

  it('opens S3 in the region, on the dual-stack endpoint only when asked', async () => {
    const dual = clientOf(
      openObjectStore({ provider: 'aws', bucket: 'b-1', region: 'eu-west-1', dualStack: true }),
    );
    const plain = clientOf(
      openObjectStore({ provider: 'aws', bucket: 'b-1', region: 'eu-west-1' }),
    );
    try {
      expect(await dual.config.region()).toBe('eu-west-1');
      expect(await dual.config.useDualstackEndpoint()).toBe(true);
      expect(await plain.config.useDualstackEndpoint()).toBe(false);
    } finally {
      dual.destroy();
      plain.destroy();
    }
  });

  it('uses an endpoint override with path-style addressing instead of dual-stack', async () => {
    const client = clientOf(
      openObjectStore({
        provider: 'aws',
        bucket: 'b-1',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:4566',
        dualStack: true,
      }),
    );
    try {
      expect(client.config.forcePathStyle).toBe(true);
      expect(await client.config.useDualstackEndpoint()).toBe(false);
      expect(await client.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    } finally {
      client.destroy();
    }
  });
});
