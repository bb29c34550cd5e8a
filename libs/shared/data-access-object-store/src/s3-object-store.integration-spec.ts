import { S3Client } from '@aws-sdk/client-s3';
import { getAwsEmulator, uniqueBucketName, emulatorBucket } from '@podmin/testing';
import { describeObjectStoreContract, expectCode } from './object-store.contract';
import { createS3Client } from './s3-client';
import { S3ObjectStore } from './s3-object-store';

describeObjectStoreContract('S3ObjectStore on the moto emulator', async () => {
  const { client, bucket } = await emulatorBucket('object-store-contract', createS3Client);
  return {
    store: new S3ObjectStore({ client, bucket }),
    cleanup: () => Promise.resolve(client.destroy()),
  };
});

describe('S3ObjectStore failures against real endpoints', () => {
  it('reports a missing bucket as BUCKET_UNAVAILABLE', async () => {
    const emulator = await getAwsEmulator();
    const client = createS3Client({
      region: emulator.region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    });
    try {
      const store = new S3ObjectStore({ client, bucket: uniqueBucketName('never-created') });
      await expectCode(store.get('k'), 'BUCKET_UNAVAILABLE');
      await expectCode(store.putIfAbsent('k', 'v'), 'BUCKET_UNAVAILABLE');
      await expectCode(store.list(''), 'BUCKET_UNAVAILABLE');
    } finally {
      client.destroy();
    }
  }, 180_000);

  it('reports an unreachable endpoint as BUCKET_UNAVAILABLE with the network error as cause', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
    try {
      const err: unknown = await new S3ObjectStore({ client, bucket: 'unreachable' })
        .head('k')
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
      expect((err as Error).message).toContain('ECONNREFUSED');
      expect((err as Error).cause).toBeInstanceOf(Error);
    } finally {
      client.destroy();
    }
  });
});

describe('S3ObjectStore server time on the moto emulator', () => {
  it("keeps every response's Date header, errors included, beside this store's clock", async () => {
    const { client, bucket } = await emulatorBucket('object-store-date', createS3Client);
    try {
      // This store's clock runs 90 s ahead of the real one, which the server's Date follows.
      const store = new S3ObjectStore({ client, bucket, now: () => Date.now() + 90_000 });
      expect(store.lastServerTime()).toBeUndefined();
      await store.put('dns/leader.json', '{}');
      const written = store.lastServerTime();
      if (written === undefined) throw new Error('no Date header was captured');
      expect(written.serverMs % 1000).toBe(0); // an HTTP date: whole seconds
      expect(Math.abs(written.serverMs - Date.now())).toBeLessThan(5_000);
      expect(written.localMs - written.serverMs).toBeGreaterThan(88_000);
      expect(written.localMs - written.serverMs).toBeLessThan(92_000);
      await store.get('dns/leader.json');
      const read = store.lastServerTime();
      expect(read).not.toBe(written);
      await expectCode(store.get('dns/missing.json'), 'OBJECT_NOT_FOUND');
      const missing = store.lastServerTime();
      expect(missing).not.toBe(read);
      expect(Math.abs((missing?.serverMs ?? 0) - Date.now())).toBeLessThan(5_000);
    } finally {
      client.destroy();
    }
  }, 180_000);
});
