import { InMemoryObjectStore } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { ObjectStoreExternalBundle, parseS3Url } from './object-store-external-bundle';

describe('ObjectStoreExternalBundle', () => {
  it('parses s3://BUCKET/KEY strictly', () => {
    expect(parseS3Url('s3://trust-bucket/podmin/prod/ca.pem')).toEqual({
      bucket: 'trust-bucket',
      key: 'podmin/prod/ca.pem',
    });
    for (const bad of [
      's3://bucket',
      'https://b/k',
      's3://Bad_Bucket/k',
      's3://bucket/a//b',
      's3://bucket/../k',
    ]) {
      expect(() => parseS3Url(bad)).toThrow(/--workload-ca-publish/);
    }
  });

  it('creates, replaces by ETag and reports absence', async () => {
    const store = new InMemoryObjectStore();
    const bundle = new ObjectStoreExternalBundle(store, parseS3Url('s3://trust/ca.pem'));
    expect(bundle.location).toBe('s3://trust/ca.pem');
    expect(await bundle.read()).toBeUndefined();
    const etag = await bundle.write('one\n', undefined);
    await expect(bundle.write('again\n', undefined)).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    await bundle.write('two\n', etag);
    await expect(bundle.write('three\n', etag)).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
    expect((await bundle.read())?.body).toBe('two\n');
  });

  it('takes a denied read of a missing key as absent, as S3 answers a role without ListBucket', async () => {
    const store = new InMemoryObjectStore();
    // S3 without s3:ListBucket: a missing key is 403, an existing one reads normally.
    const denying = {
      get: async (key: string, options?: { maxBytes?: number }) => {
        try {
          return await store.get(key, options);
        } catch (err) {
          if ((err as { code?: string }).code === 'OBJECT_NOT_FOUND')
            throw new PodminError('ACCESS_DENIED', `reading ${key}: access denied (403)`);
          throw err;
        }
      },
      putIfAbsent: (key: string, body: string) => store.putIfAbsent(key, body),
      putIfMatch: (key: string, body: string, etag: string) => store.putIfMatch(key, body, etag),
    };
    const bundle = new ObjectStoreExternalBundle(denying, parseS3Url('s3://trust/ca.pem'));
    expect(await bundle.read()).toBeUndefined();
    const etag = await bundle.write('one\n', undefined);
    expect(await bundle.read()).toEqual({ body: 'one\n', etag });
    // A writer that wrongly took it as absent is stopped by the create-only write.
    await expect(bundle.write('other\n', undefined)).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
    });
  });
});
