import { createHash } from 'node:crypto';
import { RecordingReporter } from '@podmin/cli-util-io';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import { artifact, FakeUpstream, makeTempDir, type TempDir, emulatorBucket } from '@podmin/testing';
import {
  DEPENDENCY_MANIFEST_KEY,
  parseDependencyManifest,
  type DependencyImageEntry,
  type DesiredImage,
} from '@podmin/util-dependencies';
import { DownloadCache } from './download-cache';
import { DependencyResolver } from './resolver';
import { syncDependencies, type ImageMirror } from './sync';

const DAY = 24 * 60 * 60 * 1000;

/** Hand-written ImageMirror fake: records calls, keeps a marker object per mirrored image. */
class FakeImageMirror implements ImageMirror {
  readonly resolved: string[] = [];
  readonly ensured: string[] = [];
  resolve(image: DesiredImage): Promise<{ digest: string; size: number }> {
    this.resolved.push(image.source);
    return Promise.resolve({
      digest: `sha256:${createHash('sha256').update(image.source).digest('hex')}`,
      size: 1090874,
    });
  }
  async ensurePublished(
    store: ObjectStore,
    entry: DependencyImageEntry,
  ): Promise<'present' | 'repaired' | 'uploaded'> {
    this.ensured.push(entry.source);
    const key = `${entry.path}/index.json`;
    const existing = await store.get(key).catch(() => undefined);
    if (existing?.body.toString() === entry.digest) return 'present';
    await store.put(key, entry.digest);
    return 'uploaded';
  }
}

/** Delegating store that lets a test run code before a write or fail deletes. */
class InterposedStore implements ObjectStore {
  beforeManifestWrite: (() => Promise<void>) | undefined;
  failDeletes = false;
  constructor(private readonly inner: ObjectStore) {}
  get: ObjectStore['get'] = (k, o) => this.inner.get(k, o);
  getIfChanged: ObjectStore['getIfChanged'] = (k, e, o) => this.inner.getIfChanged(k, e, o);
  putIfAbsent: ObjectStore['putIfAbsent'] = async (k, b) => {
    if (k === DEPENDENCY_MANIFEST_KEY) await this.beforeManifestWrite?.();
    return this.inner.putIfAbsent(k, b);
  };
  putIfMatch: ObjectStore['putIfMatch'] = async (k, b, e) => {
    if (k === DEPENDENCY_MANIFEST_KEY) await this.beforeManifestWrite?.();
    return this.inner.putIfMatch(k, b, e);
  };
  put: ObjectStore['put'] = (k, b) => this.inner.put(k, b);
  head: ObjectStore['head'] = (k) => this.inner.head(k);
  openRead: ObjectStore['openRead'] = (k, o) => this.inner.openRead(k, o);
  delete: ObjectStore['delete'] = (k) =>
    this.failDeletes ? Promise.reject(new Error('AccessDenied (injected)')) : this.inner.delete(k);
  list: ObjectStore['list'] = (p, t) => this.inner.list(p, t);
}

interface StoreUnderTest {
  store: ObjectStore;
  cleanup: () => Promise<void>;
}

const stores: Array<[string, () => Promise<StoreUnderTest>]> = [
  [
    'the local directory store',
    async () => {
      const dir = await makeTempDir('podmin-deps-bucket');
      return { store: new LocalDirectoryObjectStore(dir.path), cleanup: dir.cleanup };
    },
  ],
  [
    'S3 on the moto emulator',
    async () => {
      const { client, bucket } = await emulatorBucket('podmin-deps', createS3Client);
      return {
        store: new S3ObjectStore({ client, bucket }),
        cleanup: () => Promise.resolve(client.destroy()),
      };
    },
  ],
];

describe.each(stores)('syncDependencies on %s', (_label, open) => {
  let upstream: FakeUpstream;
  let bucket: StoreUnderTest;
  let store: InterposedStore;
  let temp: TempDir;
  let reporter: RecordingReporter;
  let images: FakeImageMirror;
  let cacheRuns = 0;

  beforeEach(async () => {
    upstream = await new FakeUpstream().start();
    bucket = await open();
    store = new InterposedStore(bucket.store);
    temp = await makeTempDir('podmin-deps-cache');
    reporter = new RecordingReporter();
    images = new FakeImageMirror();
  }, 180_000);
  afterEach(async () => {
    await upstream.stop();
    await bucket.cleanup();
    await temp.cleanup();
  });

  /** Runs a sync with a fresh, empty download cache unless `sharedCache`. */
  const sync = (
    archs: Array<'amd64' | 'arm64'>,
    clock = () => new Date(),
    sharedCache = false,
    otelLogs?: boolean,
  ) =>
    syncDependencies(store, archs, {
      ...(otelLogs === undefined ? {} : { otelLogs }),
      resolver: new DependencyResolver({ cliVersion: '0.1.0', endpoints: upstream.endpoints }),
      cache: new DownloadCache({
        dir: `${temp.path}/${sharedCache ? 'shared' : `run-${++cacheRuns}`}/downloads`,
        reporter,
      }),
      images,
      reporter,
      clock,
    });

  const artifactRequests = () =>
    upstream.requests.filter(
      (r) => /^\/(gh-dl|gvisor|node\/v|k8s)\//.test(r) && !/\.sha|SHASUMS/.test(r),
    ).length;

  it('publishes everything once, then a matching manifest needs no download, upload or write', async () => {
    const first = await sync(['amd64', 'arm64']);
    expect(first.written).toBe(true);
    expect(first.uploaded).toHaveLength(16);
    const stored = await store.get(DEPENDENCY_MANIFEST_KEY);
    const manifest = parseDependencyManifest(stored.body);
    expect(manifest).toEqual(first.manifest);
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      'cni-plugins',
      'containerd',
      'coredns',
      'crictl',
      'gvisor',
      'kubelet',
      'nodejs',
      'podmin-agent',
    ]);
    expect(manifest.dependencies['kubelet']?.arm64).toEqual({
      version: '1.36.2',
      url: `${upstream.base}/k8s/release/v1.36.2/bin/linux/arm64/kubelet`,
      path: 'dependencies/kubelet/kubelet-v1.36.2-linux-arm64',
      digest: `sha512:${createHash('sha512')
        .update(artifact('kubelet-1.36.2-arm64', 200 * 1024))
        .digest('hex')}`,
      size: 200 * 1024,
    });
    expect(manifest.images['pause']).toMatchObject({
      version: '3.10.1',
      source: 'registry.k8s.io/pause:3.10.1',
      path: 'mirror/registry.k8s.io/pause',
      size: 1090874,
    });
    const uploadedBody = await store.get('dependencies/kubelet/kubelet-v1.36.2-linux-arm64', {
      maxBytes: 1024 * 1024,
    });
    expect(uploadedBody.body.equals(artifact('kubelet-1.36.2-arm64', 200 * 1024))).toBe(true);

    const downloads = artifactRequests();
    const second = await sync(['amd64', 'arm64']);
    expect(second).toMatchObject({ written: false, uploaded: [], imagesChanged: [], deleted: [] });
    expect(artifactRequests()).toBe(downloads);
    expect((await store.get(DEPENDENCY_MANIFEST_KEY)).etag).toBe(stored.etag);
    expect(images.resolved).toEqual(['registry.k8s.io/pause:3.10.1']);
    expect(images.ensured).toHaveLength(2);
  }, 180_000);

  it('publishes the --otel-logs packages only when asked, with the digests their indexes list', async () => {
    const sha = (algorithm: 'sha256' | 'sha512', label: string) =>
      `${algorithm}:${createHash(algorithm).update(artifact(label)).digest('hex')}`;
    const first = await sync(['amd64', 'arm64'], undefined, true, true);
    expect(first.uploaded).toEqual(
      expect.arrayContaining([
        'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-amd64.deb',
        'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb',
        'dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-amd64.deb',
        'dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-arm64.deb',
      ]),
    );
    expect(first.uploaded).toHaveLength(20);
    const manifest = parseDependencyManifest((await store.get(DEPENDENCY_MANIFEST_KEY)).body);
    expect(manifest.dependencies['fluent-bit']).toEqual({
      amd64: {
        version: '5.0.10',
        url: `${upstream.base}/fluentbit/pool/main/f/fluent-bit/fluent-bit_5.0.10_amd64.deb`,
        path: 'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-amd64.deb',
        digest: sha('sha512', 'fluent-bit-5.0.10-amd64'),
        size: 64 * 1024,
      },
      arm64: {
        version: '5.0.10',
        url: `${upstream.base}/fluentbit/pool/main/f/fluent-bit/fluent-bit_5.0.10_arm64.deb`,
        path: 'dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb',
        digest: sha('sha512', 'fluent-bit-5.0.10-arm64'),
        size: 64 * 1024,
      },
    });
    expect(manifest.dependencies['libpq5']?.arm64).toEqual({
      version: '17.6-0+deb13u1',
      url: `${upstream.base}/debian-archive/pool/main/p/postgresql-17/libpq5_17.6-0+deb13u1_arm64.deb`,
      path: 'dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-arm64.deb',
      digest: sha('sha256', 'libpq5-17.6-0+deb13u1-arm64'),
      size: 64 * 1024,
    });
    const stored = await store.get('dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-arm64.deb', {
      maxBytes: 1024 * 1024,
    });
    expect(stored.body.equals(artifact('libpq5-17.6-0+deb13u1-arm64'))).toBe(true);

    // A sync that does not know the log export keeps the entries; an unchanged one writes nothing.
    const unknowing = await sync(['amd64', 'arm64'], undefined, true);
    expect(unknowing).toMatchObject({ written: false, uploaded: [] });
    const again = await sync(['amd64', 'arm64'], undefined, true, true);
    expect(again).toMatchObject({ written: false, uploaded: [] });

    // Without --otel-logs the packages leave the manifest (their objects stay for retention).
    const without = await sync(['amd64', 'arm64'], undefined, true, false);
    expect(without.written).toBe(true);
    expect(Object.keys(without.manifest.dependencies)).not.toContain('fluent-bit');
    expect(Object.keys(without.manifest.dependencies)).not.toContain('libpq5');
    await expect(
      store.head('dependencies/fluent-bit/fluent-bit-v5.0.10-linux-amd64.deb'),
    ).resolves.toBeDefined();
  }, 180_000);

  it('refuses a package whose bytes do not match its index digest, naming both digests', async () => {
    const pool = '/fluentbit/pool/main/f/fluent-bit/fluent-bit_5.0.10_arm64.deb';
    const listed = `sha512:${createHash('sha512').update(artifact('fluent-bit-5.0.10-arm64')).digest('hex')}`;
    // Same length, other bytes: only the digest can tell.
    const tampered = artifact('tampered-fluent-bit-5.0.10');
    upstream.replaceBody(pool, tampered);
    const actual = `sha512:${createHash('sha512').update(tampered).digest('hex')}`;
    const failure = sync(['arm64'], undefined, false, true);
    await expect(failure).rejects.toMatchObject({
      code: 'IO_ERROR',
      message: expect.stringContaining(`digest mismatch: expected ${listed}, got ${actual}`),
    });
    await expect(store.head(DEPENDENCY_MANIFEST_KEY)).rejects.toMatchObject({
      code: 'OBJECT_NOT_FOUND',
    });
    await expect(
      store.head('dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb'),
    ).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
  }, 180_000);

  it('uploads only the pending files of a new upstream version and keeps the previous one', async () => {
    await sync(['amd64'], undefined, true);
    upstream.addRelease(
      'containerd/containerd',
      {
        tag: 'v2.1.6',
        assets: {
          'containerd-2.1.6-linux-amd64.tar.gz': artifact('containerd-2.1.6-amd64'),
          'containerd-2.1.6-linux-arm64.tar.gz': artifact('containerd-2.1.6-arm64'),
        },
      },
      ['.sha256sum'],
    );
    const before = artifactRequests();
    const result = await sync(['amd64'], undefined, true);
    expect(result.uploaded).toEqual([
      'dependencies/containerd/containerd-v2.1.6-linux-amd64.tar.gz',
    ]);
    expect(artifactRequests() - before).toBe(1);
    expect(result.manifest.dependencies['containerd']?.amd64?.version).toBe('2.1.6');
    await expect(
      store.head('dependencies/containerd/containerd-v2.1.5-linux-amd64.tar.gz'),
    ).resolves.toBeDefined();
  }, 180_000);

  it('fails with a clear error when another writer changes the manifest first', async () => {
    await sync(['amd64']);
    upstream.addRelease(
      'containerd/containerd',
      { tag: 'v2.1.7', assets: { 'containerd-2.1.7-linux-amd64.tar.gz': artifact('c217') } },
      ['.sha256sum'],
    );
    store.beforeManifestWrite = async () => {
      store.beforeManifestWrite = undefined;
      const current = await store.get(DEPENDENCY_MANIFEST_KEY);
      await store.putIfMatch(DEPENDENCY_MANIFEST_KEY, current.body.toString() + ' ', current.etag);
    };
    await expect(sync(['amd64'])).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
      message: expect.stringContaining('another writer changed it'),
      hint: expect.stringContaining('run setup again'),
    });
  }, 180_000);

  it('retains two versions per architecture, deletes older ones only after 28 days, warns on failure', async () => {
    const old = (v: string, arch = 'amd64') =>
      `dependencies/containerd/containerd-v${v}-linux-${arch}.tar.gz`;
    await store.put(old('2.0.0'), 'x');
    await store.put(old('2.0.1'), 'x');
    await store.put(old('1.9.0', 'arm64'), 'x');

    const young = await sync(['amd64']);
    expect(young.deleted).toEqual([]);

    const later = () => new Date(Date.now() + 29 * DAY);
    store.failDeletes = true;
    const failing = await sync(['amd64'], later);
    expect(failing.deleted).toEqual([]);
    expect(reporter.warnings.some((w) => w.includes(`deleting ${old('2.0.0')}`))).toBe(true);

    store.failDeletes = false;
    const aged = await sync(['amd64'], later);
    // 2.1.5 (published) and 2.0.1 are the newest two; arm64's single version is kept.
    expect(aged.deleted).toEqual([old('2.0.0')]);
    await expect(store.head(old('1.9.0', 'arm64'))).resolves.toBeDefined();
    await expect(store.head(old('2.0.1'))).resolves.toBeDefined();
  }, 180_000);
});
