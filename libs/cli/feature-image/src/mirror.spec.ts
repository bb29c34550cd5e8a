import { InMemoryObjectStore, makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import type { DependencyImageEntry } from '@podmin/util-dependencies';
import {
  REF_NAME_ANNOTATION,
  parseImageIndex,
  parseImageManifest,
  serializeLayoutIndex,
  sha256Digest,
} from '@podmin/util-oci';
import type { Descriptor } from '@podmin/util-oci';
import { QuietReporter } from './__fixtures__/quiet-reporter';
import {
  PAUSE_IMAGE,
  blobBytesOnDisk,
  buildPauseImage,
  offlineDeps,
} from './__fixtures__/pause-image';
import type { BuildResult } from './build/build-image';
import type { ImageDeps } from './image-deps';
import { DependencyImageMirror, uniqueContentSize } from './mirror';

const INDEX_KEY = `${PAUSE_IMAGE.path}/index.json`;

const blob = (name: string, size: number, mediaType = 'application/octet-stream'): Descriptor => ({
  mediaType,
  digest: sha256Digest(name),
  size,
});

describe('uniqueContentSize', () => {
  it('sums index, manifests, configs and layers, counting a shared digest once', () => {
    const index = blob('index', 300);
    const amd64 = blob('manifest-amd64', 500);
    const arm64 = blob('manifest-arm64', 510);
    const layer = blob('shared layer', 1000);
    const size = uniqueContentSize({
      manifests: [
        { descriptor: amd64, bytes: Buffer.alloc(0) },
        { descriptor: arm64, bytes: Buffer.alloc(0) },
        { descriptor: index, bytes: Buffer.alloc(0) },
        { descriptor: amd64, bytes: Buffer.alloc(0) },
      ],
      blobs: [blob('config-amd64', 100), layer, blob('config-arm64', 101), layer],
    });
    expect(size).toBe(300 + 500 + 510 + 100 + 101 + 1000);
  });

  it('is zero for an empty graph', () => {
    expect(uniqueContentSize({ manifests: [], blobs: [] })).toBe(0);
  });
});

describe('DependencyImageMirror', () => {
  let work: TempDir;
  let deps: ImageDeps;
  let built: BuildResult;
  let mirror: DependencyImageMirror;
  let entry: DependencyImageEntry;

  beforeAll(async () => {
    work = await makeTempDir('podmin-mirror');
    deps = offlineDeps(work.path, new QuietReporter());
    built = await buildPauseImage(deps);
    mirror = new DependencyImageMirror(deps, { backoff: () => Promise.resolve() });
    const { digest, size } = await mirror.resolve(PAUSE_IMAGE);
    entry = {
      version: PAUSE_IMAGE.version,
      source: PAUSE_IMAGE.source,
      path: PAUSE_IMAGE.path,
      digest,
      size,
    };
  });
  afterAll(() => work.cleanup());

  it('resolves the stored index digest and its unique bytes without pulling', async () => {
    expect(entry.digest).toBe(built.index.digest);
    const onDisk = await blobBytesOnDisk(deps.store, 'registry.k8s.io/pause');
    expect(entry.size).toBe(onDisk);
    // Both platforms share the one COPY layer, so a per-platform sum would count it twice.
    const layers = await Promise.all(
      built.manifests.map(async (m) =>
        parseImageManifest(
          await deps.store.readBlob('registry.k8s.io/pause', m.digest, { maxBytes: 1 << 20 }),
        ).layers.map((l) => l.digest),
      ),
    );
    expect(layers).toHaveLength(2);
    expect(layers[0]).toEqual(layers[1]);
  });

  it('uploads, then finds it present without writing, then repairs only index.json', async () => {
    const bucket = new InMemoryObjectStore();
    await expect(mirror.ensurePublished(bucket, entry)).resolves.toBe('uploaded');
    const writes = bucket.calls.filter((c) => c.startsWith('put'));
    expect(writes.at(-1)).toBe(`putIfAbsent ${INDEX_KEY}`);
    expect(writes.at(-2)).toBe('putIfAbsent mirror/registry.k8s.io/pause/oci-layout');
    expect(
      writes
        .slice(0, -2)
        .every((c) => c.startsWith('putIfAbsent mirror/registry.k8s.io/pause/blobs/sha256/')),
    ).toBe(true);
    const index = parseImageIndex((await bucket.get(INDEX_KEY)).body);
    expect(index.manifests[0]).toMatchObject({
      digest: entry.digest,
      annotations: { [REF_NAME_ANNOTATION]: '3.10.1' },
    });
    expect(
      index.manifests
        .slice(1)
        .map((d) => d.digest)
        .sort(),
    ).toEqual(built.manifests.map((d) => d.digest).sort());

    bucket.calls.length = 0;
    await expect(mirror.ensurePublished(bucket, entry)).resolves.toBe('present');
    expect(bucket.calls.filter((c) => !c.startsWith('get '))).toEqual([]);

    await bucket.put(
      INDEX_KEY,
      serializeLayoutIndex({ ...index, manifests: index.manifests.slice(0, 1) }),
    );
    bucket.calls.length = 0;
    await expect(mirror.ensurePublished(bucket, entry)).resolves.toBe('repaired');
    expect(bucket.calls.filter((c) => !c.startsWith('get '))).toEqual([`putIfMatch ${INDEX_KEY}`]);
    expect(parseImageIndex((await bucket.get(INDEX_KEY)).body)).toEqual(index);
  });

  it('uploads again when the tag points elsewhere or the index blob is gone', async () => {
    const bucket = new InMemoryObjectStore();
    await mirror.ensurePublished(bucket, entry);
    const index = parseImageIndex((await bucket.get(INDEX_KEY)).body);
    const other = { ...index.manifests[0]!, digest: sha256Digest('another image') };
    await bucket.put(
      INDEX_KEY,
      serializeLayoutIndex({ ...index, manifests: [other, ...index.manifests.slice(1)] }),
    );
    bucket.calls.length = 0;
    await expect(mirror.ensurePublished(bucket, entry)).resolves.toBe('uploaded');
    // Every blob was already there: only the index moves the tag back.
    expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([`putIfMatch ${INDEX_KEY}`]);
    expect(parseImageIndex((await bucket.get(INDEX_KEY)).body)).toEqual(index);

    const indexBlob = `mirror/registry.k8s.io/pause/blobs/sha256/${entry.digest.slice('sha256:'.length)}`;
    await bucket.delete(indexBlob);
    bucket.calls.length = 0;
    await expect(mirror.ensurePublished(bucket, entry)).resolves.toBe('uploaded');
    expect(bucket.calls.filter((c) => c.startsWith('put'))).toEqual([`putIfAbsent ${indexBlob}`]);
  });

  it('refuses a path that is not the mirror of the source', async () => {
    await expect(
      mirror.ensurePublished(new InMemoryObjectStore(), {
        ...entry,
        path: 'mirror/docker.io/pause',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
