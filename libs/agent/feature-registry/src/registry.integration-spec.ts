import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { md5Etag } from '@podmin/data-access-object-store';
import type { ObjectStore } from '@podmin/data-access-object-store';
import { describeUnless, itIf, makeTempDir, which } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { OCI_INDEX_MEDIA_TYPE, blobPath, sha256Digest } from '@podmin/util-oci';
import { REGISTRY_BUCKETS, type RegistryBucket } from './__fixtures__/buckets';
import { buildTestImage, layoutObjects } from './__fixtures__/oci-image';
import type { TestImage } from './__fixtures__/oci-image';
import { containerdUnusable, run, startContainerd } from './__fixtures__/real-clients';
import type { TestContainerd } from './__fixtures__/real-clients';
import type { RunningRegistry } from './registry.process';
import { startRegistry } from './registry.process';
import { JsonLogger } from '@podmin/agent-util-logging';

const HELLO = 'apps/demo/hello';
const TAMPERED = 'apps/demo/tampered';
const MIRRORED = 'mirror/registry.k8s.io/pause';

/** Publishes a layout in push order: blobs, oci-layout, then index.json last. */
async function publish(
  objects: ObjectStore,
  repository: string,
  tag: string,
  image: TestImage,
): Promise<void> {
  for (const [key, body] of layoutObjects(repository, tag, image)) {
    await objects.put(key, body);
  }
}

describe.each(REGISTRY_BUCKETS)('registry against a %s bucket', (kind, makeBucket) => {
  const hello = buildTestImage(`hello ${kind}`);
  const tampered = buildTestImage(`tampered ${kind}`);
  let bucket: RegistryBucket;
  let registry: RunningRegistry;
  let host: string;
  let work: TempDir;

  beforeAll(async () => {
    bucket = await makeBucket('registry-bucket');
    work = await makeTempDir('podmin-registry-work');
    await publish(bucket.objects, HELLO, 'v1', hello);
    await publish(bucket.objects, MIRRORED, '3.10', hello);
    await publish(bucket.objects, TAMPERED, 'v1', tampered);
    const layerKey = `${TAMPERED}/${blobPath(tampered.platforms[0]!.layer.digest)}`;
    const good = tampered.blobs.get(tampered.platforms[0]!.layer.digest)!;
    const bad = Buffer.from(good);
    const middle = Math.floor(bad.length / 2);
    bad.writeUInt8(bad.readUInt8(middle) ^ 0x55, middle);
    await bucket.objects.put(layerKey, bad);
    registry = await startRegistry(
      { listen: { host: '127.0.0.1', port: 0 } },
      { store: bucket.registryStore, logger: new JsonLogger({ write: () => undefined }) },
    );
    host = `127.0.0.1:${registry.port}`;
  }, 180_000);

  afterAll(async () => {
    await registry?.app.close();
    await bucket?.cleanup();
    await work?.cleanup();
  });

  it('serves the pull API from the layout (supertest)', async () => {
    const base = `http://${host}`;
    await request(base).get('/v2/').expect(200, {});
    const tag = await request(base)
      .head(`/v2/${HELLO}/manifests/v1`)
      .set('Accept', OCI_INDEX_MEDIA_TYPE)
      .expect(200);
    expect(tag.headers['docker-content-digest']).toBe(hello.index.digest);
    const arm = hello.platforms[1]!;
    const manifest = await request(base)
      .get(`/v2/${HELLO}/manifests/${arm.manifest.digest}`)
      .responseType('blob')
      .expect(200);
    expect(sha256Digest(manifest.body as Buffer)).toBe(arm.manifest.digest);
    // A Pod pinned by digest (issue 34) pulls the top-level image index by its digest.
    const pinned = await request(base)
      .get(`/v2/${HELLO}/manifests/${hello.index.digest}`)
      .set('Accept', OCI_INDEX_MEDIA_TYPE)
      .responseType('blob')
      .expect(200);
    expect(pinned.headers['docker-content-digest']).toBe(hello.index.digest);
    expect(sha256Digest(pinned.body as Buffer)).toBe(hello.index.digest);
    const layer = hello.blobs.get(arm.layer.digest)!;
    const range = await request(base)
      .get(`/v2/${HELLO}/blobs/${arm.layer.digest}`)
      .set('Range', 'bytes=5-24')
      .responseType('blob')
      .expect(206);
    expect(range.headers['content-range']).toBe(`bytes 5-24/${layer.length}`);
    expect((range.body as Buffer).equals(layer.subarray(5, 25))).toBe(true);
    await request(base)
      .get(`/v2/${HELLO}/blobs/${arm.layer.digest}`)
      .set('Range', `bytes=${layer.length}-`)
      .expect(416);
    const head = await request(base).head(`/v2/${HELLO}/blobs/${arm.layer.digest}`).expect(200);
    expect(Number(head.headers['content-length'])).toBe(layer.length);
    await request(base).get(`/v2/${MIRRORED}/manifests/3.10`).expect(200);
    await request(base)
      .get(`/v2/${HELLO}/blobs/${sha256Digest('nope')}`)
      .expect(404, /BLOB_UNKNOWN/);
    await request(base)
      .put(`/v2/${HELLO}/manifests/v2`)
      .send('{}')
      .expect(405, /UNSUPPORTED/);
    await request(base)
      .get('/v2/apps/../tfstate/manifests/v1')
      .expect(400, /NAME_INVALID/);
  });

  it('reads objects with the ETag every other reader of the bucket sees', async () => {
    const arm = hello.platforms[1]!;
    const key = `${HELLO}/${blobPath(arm.layer.digest)}`;
    const expected = (await bucket.objects.head(key)).etag;
    expect(expected).toBe(md5Etag(hello.blobs.get(arm.layer.digest)!));
    const whole = await bucket.registryStore.openRead(key);
    const part = await bucket.registryStore.openRead(key, { range: { start: 5, end: 24 } });
    for (const opened of [whole, part]) {
      if (opened.kind === 'opened') await opened.body.close();
    }
    expect([whole.kind, part.kind]).toEqual(['opened', 'opened']);
    expect(whole.kind === 'opened' && whole.etag).toBe(expected);
    expect(part.kind === 'opened' && part.etag).toBe(expected);
    expect((await bucket.registryStore.head(key)).etag).toBe(expected);
    expect((await bucket.registryStore.get(key)).etag).toBe(expected);
  });

  itIf(
    which('skopeo') !== undefined,
    'integration:skopeo',
    'skopeo is not installed (run tools/setup/apt-deps.sh)',
  )('lets skopeo copy the whole multi-platform image and inspect its digest', async () => {
    const skopeo = which('skopeo')!;
    const source = `docker://${host}/${HELLO}:v1`;
    const dest = path.join(work.path, `oci-${kind.replace(/\W/g, '-')}`);
    const copy = await run(skopeo, [
      '--insecure-policy',
      'copy',
      '--all',
      '--src-tls-verify=false',
      source,
      `oci:${dest}:v1`,
    ]);
    expect(copy.stderr).toBe('');
    expect(copy.code).toBe(0);
    const copied = JSON.parse(await readFile(path.join(dest, 'index.json'), 'utf8')) as {
      manifests: Array<{ digest: string }>;
    };
    expect(copied.manifests.map((m) => m.digest)).toEqual([hello.index.digest]);
    for (const digest of hello.blobs.keys()) {
      expect(sha256Digest(await readFile(path.join(dest, blobPath(digest))))).toBe(digest);
    }
    const raw = await run(skopeo, ['inspect', '--raw', '--tls-verify=false', source]);
    expect(sha256Digest(raw.stdout)).toBe(hello.index.digest);
    const inspect = await run(skopeo, [
      '--override-arch',
      'arm64',
      'inspect',
      '--no-tags',
      '--tls-verify=false',
      source,
    ]);
    expect({ code: inspect.code, stderr: inspect.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(inspect.stdout)).toMatchObject({
      Digest: hello.index.digest,
      Architecture: 'arm64',
      Os: 'linux',
    });
    const refused = await run(skopeo, [
      '--insecure-policy',
      'copy',
      '--all',
      '--src-tls-verify=false',
      `docker://${host}/${TAMPERED}:v1`,
      `oci:${dest}-bad:v1`,
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(tampered.platforms[0]!.layer.digest);
  });

  describeUnless(containerdUnusable(), 'integration:containerd')('containerd', () => {
    let containerd: TestContainerd | undefined;
    let ctr: string;

    beforeAll(async () => {
      containerd = await startContainerd(path.join(work.path, `ctr-${kind.replace(/\W/g, '-')}`));
      ctr = which('ctr') ?? 'ctr';
    }, 60_000);

    afterAll(async () => {
      await containerd?.stop();
    }, 30_000);

    it.each(['amd64', 'arm64'])('pulls and unpacks linux/%s with ctr', async (arch) => {
      if (containerd === undefined) throw new Error('containerd did not start');
      const pull = await run(ctr, [
        '-a',
        containerd.address,
        '-n',
        'podmin-test',
        'images',
        'pull',
        '--plain-http',
        '--platform',
        `linux/${arch}`,
        '--snapshotter',
        'native',
        '--print-chainid',
        `${host}/${HELLO}:v1`,
      ]);
      // ctr may log benign "context canceled" lines; a failed pull ends with "ctr: <error>".
      expect(pull.stderr).not.toMatch(/^ctr: /m);
      expect(pull.code).toBe(0);
      const platform = hello.platforms.find((p) => p.architecture === arch)!;
      const unpacked = await snapshotFiles(containerd.root, 'hello.txt');
      expect(unpacked).toContain(platform.helloText);
      const images = await run(ctr, [
        '-a',
        containerd.address,
        '-n',
        'podmin-test',
        'images',
        'ls',
        '-q',
      ]);
      expect(images.stdout.trim().split('\n')).toContain(`${host}/${HELLO}:v1`);
    });

    it('pulls a reference pinned by digest (name@sha256, as deploy commits it)', async () => {
      if (containerd === undefined) throw new Error('containerd did not start');
      const pinned = `${host}/${HELLO}@${hello.index.digest}`;
      const pull = await run(ctr, [
        '-a',
        containerd.address,
        '-n',
        'podmin-test-pinned',
        'images',
        'pull',
        '--plain-http',
        '--platform',
        'linux/arm64',
        '--snapshotter',
        'native',
        pinned,
      ]);
      expect(pull.stderr).not.toMatch(/^ctr: /m);
      expect(pull.code).toBe(0);
      const images = await run(ctr, [
        '-a',
        containerd.address,
        '-n',
        'podmin-test-pinned',
        'images',
        'ls',
      ]);
      expect(images.stdout).toContain(pinned);
      expect(images.stdout).toContain(hello.index.digest);
    });

    it('fails to pull an image whose layer was tampered with in the bucket', async () => {
      if (containerd === undefined) throw new Error('containerd did not start');
      const pull = await run(ctr, [
        '-a',
        containerd.address,
        '-n',
        'podmin-tampered',
        'images',
        'pull',
        '--plain-http',
        '--platform',
        'linux/amd64',
        '--snapshotter',
        'native',
        `${host}/${TAMPERED}:v1`,
      ]);
      expect(pull.code).not.toBe(0);
      expect(pull.stderr).toContain(tampered.platforms[0]!.layer.digest);
      expect(await snapshotFiles(containerd.root, 'hello.txt')).not.toContain(
        tampered.platforms[0]!.helloText,
      );
    });
  });
});

/** Contents of `file` in every native snapshot under a containerd root. */
async function snapshotFiles(root: string, file: string): Promise<string[]> {
  const dir = path.join(root, 'io.containerd.snapshotter.v1.native', 'snapshots');
  const ids = await readdir(dir).catch(() => []);
  const contents: string[] = [];
  for (const id of ids) {
    const text = await readFile(path.join(dir, id, file), 'utf8').catch(() => undefined);
    if (text !== undefined) contents.push(text);
  }
  return contents;
}
