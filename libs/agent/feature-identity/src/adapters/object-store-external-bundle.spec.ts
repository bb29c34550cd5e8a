import { InMemoryObjectStore } from '@podmin/testing';
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
});
