import request from 'supertest';
import { JsonLogger } from '@podmin/agent-util-logging';
import { REGISTRY_BUCKETS, type RegistryBucket } from './__fixtures__/buckets';
import { buildTestImage, layoutObjects } from './__fixtures__/oci-image';
import type { RunningRegistry } from './registry.process';
import { startRegistry } from './registry.process';

const HELLO = 'apps/demo/hello';

describe.each(REGISTRY_BUCKETS)('registry when its %s bucket is gone', (kind, makeBucket) => {
  const hello = buildTestImage(`gone ${kind}`);
  let bucket: RegistryBucket;
  let registry: RunningRegistry;
  let base: string;

  beforeAll(async () => {
    bucket = await makeBucket('registry-gone');
    for (const [key, body] of layoutObjects(HELLO, 'v1', hello))
      await bucket.objects.put(key, body);
    registry = await startRegistry(
      { listen: { host: '127.0.0.1', port: 0 } },
      { store: bucket.registryStore, logger: new JsonLogger({ write: () => undefined }) },
    );
    base = `http://127.0.0.1:${registry.port}`;
  }, 180_000);

  afterAll(async () => {
    await registry?.app.close();
    await bucket?.cleanup();
  });

  it('answers 503 UNAVAILABLE with an OCI error body, not an internal error or NAME_UNKNOWN', async () => {
    await request(base).get(`/v2/${HELLO}/manifests/v1`).expect(200);
    await bucket.remove();
    const layer = hello.platforms[0]!.layer.digest;
    for (const path of [`/v2/${HELLO}/manifests/v1`, `/v2/${HELLO}/blobs/${layer}`]) {
      const res = await request(base).get(path);
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(res.text) as { errors: Array<{ code: string; message: string }> };
      expect(body.errors[0]?.code).toBe('UNAVAILABLE');
      expect(body.errors[0]?.message).toMatch(/bucket/i);
      expect(res.headers['retry-after']).toBe('5');
    }
  });
});
