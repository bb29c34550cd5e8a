import http from 'node:http';
import request from 'supertest';
import {
  DOCKER_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  blobPath,
  sha256Digest,
} from '@podmin/util-oci';
import { FakeRegistryStore } from './__fixtures__/fake-registry-store';
import { buildTestImage, layoutObjects } from './__fixtures__/oci-image';
import type { RunningRegistry } from './registry.process';
import { startRegistry } from './registry.process';
import { JsonLogger } from '@podmin/agent-util-logging';

const REPO = 'apps/demo/hello';
const image = buildTestImage('unit');
const amd64 = image.platforms[0]!;
const config = { listen: { host: '127.0.0.1', port: 0 } };

describe('registry over HTTP (fake bucket)', () => {
  let store: FakeRegistryStore;
  let registry: RunningRegistry;
  let base: string;

  beforeEach(async () => {
    store = new FakeRegistryStore();
    store.putAll(layoutObjects(REPO, 'v1', image));
    registry = await startRegistry(config, {
      store,
      logger: new JsonLogger({ write: () => undefined }),
    });
    base = `http://127.0.0.1:${registry.port}`;
  });

  afterEach(async () => {
    await registry.app.close();
  });

  it('answers the base endpoint with {} and the API version header', async () => {
    const res = await request(base).get('/v2/').expect(200);
    expect(res.body).toEqual({});
    expect(res.headers['docker-distribution-api-version']).toBe('registry/2.0');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(registry.host).toBe('127.0.0.1');
  });

  it('resolves a tag to the stored index with two reads and verified bytes', async () => {
    const res = await request(base)
      .get(`/v2/${REPO}/manifests/v1`)
      .set('Accept', OCI_INDEX_MEDIA_TYPE)
      .responseType('blob')
      .expect(200);
    expect(res.headers['content-type']).toBe(OCI_INDEX_MEDIA_TYPE);
    expect(res.headers['docker-content-digest']).toBe(image.index.digest);
    expect(Number(res.headers['content-length'])).toBe(image.index.size);
    expect(sha256Digest(res.body as Buffer)).toBe(image.index.digest);
    expect(store.reads).toEqual([
      `readBounded ${REPO}/index.json`,
      `readBounded ${REPO}/${blobPath(image.index.digest)}`,
    ]);
  });

  it('answers HEAD of a manifest from index.json alone', async () => {
    const res = await request(base).head(`/v2/${REPO}/manifests/v1`).expect(200);
    expect(res.headers['docker-content-digest']).toBe(image.index.digest);
    expect(Number(res.headers['content-length'])).toBe(image.index.size);
    expect(store.reads).toEqual([`readBounded ${REPO}/index.json`]);
  });

  it('resolves a nested platform manifest by digest from the top-level index', async () => {
    const res = await request(base)
      .get(`/v2/${REPO}/manifests/${amd64.manifest.digest}`)
      .responseType('blob')
      .expect(200);
    expect(res.headers['content-type']).toBe(OCI_MANIFEST_MEDIA_TYPE);
    expect(sha256Digest(res.body as Buffer)).toBe(amd64.manifest.digest);
    expect(store.reads).toHaveLength(2);
  });

  it('returns MANIFEST_UNKNOWN when Accept excludes the stored type, or the tag or digest is unknown', async () => {
    const refused = await request(base)
      .get(`/v2/${REPO}/manifests/v1`)
      .set('Accept', DOCKER_MANIFEST_MEDIA_TYPE)
      .expect(404);
    expect(refused.body).toEqual({
      errors: [{ code: 'MANIFEST_UNKNOWN', message: expect.stringContaining('Accept') }],
    });
    await request(base)
      .get(`/v2/${REPO}/manifests/v2`)
      .expect(404, /MANIFEST_UNKNOWN/);
    await request(base)
      .get(`/v2/${REPO}/manifests/${amd64.layer.digest}`)
      .expect(404, /MANIFEST_UNKNOWN/);
    await request(base)
      .get(`/v2/apps/demo/other/manifests/v1`)
      .expect(404, /NAME_UNKNOWN/);
    await request(base)
      .get(`/v2/${REPO}/manifests/sha256:zz`)
      .expect(400, /DIGEST_INVALID/);
    await request(base)
      .get(`/v2/${REPO}/manifests/-v1`)
      .expect(400, /TAG_INVALID/);
  });

  it('refuses to serve a manifest whose stored bytes do not match its digest', async () => {
    const key = `${REPO}/${blobPath(image.index.digest)}`;
    const original = store.objects.get(key)!;
    store.objects.set(key, Buffer.from(original.toString().replace('amd64', 'amd65')));
    await request(base)
      .get(`/v2/${REPO}/manifests/v1`)
      .expect(500, /BLOB_UNKNOWN/);
  });

  it('streams blobs whole with digest and length, and HEADs them with one stat', async () => {
    const res = await request(base)
      .get(`/v2/${REPO}/blobs/${amd64.layer.digest}`)
      .responseType('blob')
      .expect(200);
    expect(sha256Digest(res.body as Buffer)).toBe(amd64.layer.digest);
    expect(res.headers['docker-content-digest']).toBe(amd64.layer.digest);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(Number(res.headers['content-length'])).toBe(amd64.layer.size);
    store.reads.length = 0;
    const head = await request(base).head(`/v2/${REPO}/blobs/${amd64.layer.digest}`).expect(200);
    expect(Number(head.headers['content-length'])).toBe(amd64.layer.size);
    expect(store.reads).toEqual([`stat ${REPO}/${blobPath(amd64.layer.digest)}`]);
    await request(base)
      .head(`/v2/${REPO}/blobs/${sha256Digest('missing')}`)
      .expect(404);
    await request(base)
      .get(`/v2/${REPO}/blobs/${sha256Digest('missing')}`)
      .expect(404, /BLOB_UNKNOWN/);
  });

  it('serves byte ranges with 206 and Content-Range, and 416 outside the blob', async () => {
    const whole = image.blobs.get(amd64.layer.digest)!;
    const res = await request(base)
      .get(`/v2/${REPO}/blobs/${amd64.layer.digest}`)
      .set('Range', 'bytes=10-19')
      .responseType('blob')
      .expect(206);
    expect(res.headers['content-range']).toBe(`bytes 10-19/${whole.length}`);
    expect((res.body as Buffer).equals(whole.subarray(10, 20))).toBe(true);
    const suffix = await request(base)
      .get(`/v2/${REPO}/blobs/${amd64.layer.digest}`)
      .set('Range', 'bytes=-5')
      .responseType('blob')
      .expect(206);
    expect((suffix.body as Buffer).equals(whole.subarray(whole.length - 5))).toBe(true);
    const outside = await request(base)
      .get(`/v2/${REPO}/blobs/${amd64.layer.digest}`)
      .set('Range', `bytes=${whole.length}-`)
      .expect(416);
    expect(outside.headers['content-range']).toBe(`bytes */${whole.length}`);
  });

  it('cuts the connection instead of completing a blob that does not match its digest', async () => {
    const key = `${REPO}/${blobPath(amd64.layer.digest)}`;
    const tampered = Buffer.from(store.objects.get(key)!);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 0xff, tampered.length - 1);
    store.objects.set(key, tampered);
    // A blob that fits in the one buffer held back is cut before any response; a larger one
    // after its headers and part of its body. Either way the client never sees it complete.
    const outcome = await new Promise<{ received: number; complete: boolean }>((resolve) => {
      let received = 0;
      http
        .get(`${base}/v2/${REPO}/blobs/${amd64.layer.digest}`, (res) => {
          res.on('data', (chunk: Buffer) => (received += chunk.length));
          res.on('error', () => resolve({ received, complete: false }));
          res.on('end', () => resolve({ received, complete: res.complete }));
        })
        .on('error', () => resolve({ received, complete: false }));
    });
    expect(outcome.complete).toBe(false);
    expect(outcome.received).toBeLessThan(tampered.length);
  });

  it('refuses writes on every path with 405 UNSUPPORTED', async () => {
    for (const path of [
      '/v2/',
      `/v2/${REPO}/manifests/v1`,
      `/v2/${REPO}/blobs/uploads/`,
      '/anything',
    ]) {
      for (const method of ['put', 'post', 'patch', 'delete'] as const) {
        const res = await request(base)[method](path).send('payload').expect(405);
        expect(res.body).toEqual({
          errors: [{ code: 'UNSUPPORTED', message: expect.any(String) }],
        });
        expect(res.headers['allow']).toBe('GET, HEAD');
      }
    }
    expect(store.reads).toEqual([]);
  });

  it('rejects traversal and names outside apps/ and mirror/ without reading the bucket', async () => {
    await request(base)
      .get('/v2/apps/../deployments/manifests/v1')
      .expect(400, /NAME_INVALID/);
    await request(base)
      .get('/v2/apps/%2e%2e/x/manifests/v1')
      .expect(400, /NAME_INVALID/);
    await request(base)
      .get('/v2/apps/Upper/manifests/v1')
      .expect(400, /NAME_INVALID/);
    await request(base)
      .get(`/v2/deployments/x/blobs/${amd64.layer.digest}`)
      .expect(404, /NAME_UNKNOWN/);
    await request(base)
      .get('/v2/mirror/docker.io/manifests/v1')
      .expect(404, /NAME_UNKNOWN/);
    await request(base)
      .get('/v2/_catalog')
      .expect(404, /UNSUPPORTED/);
    await request(base)
      .get(`/v2/${REPO}/tags/list`)
      .expect(404, /UNSUPPORTED/);
    expect(store.reads).toEqual([]);
  });
});
