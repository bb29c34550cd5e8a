import { syncDependencies } from '@podmin/cli-data-access-dependencies';
import { RecordingReporter } from '@podmin/cli-util-io';
import type { ObjectStore } from '@podmin/data-access-object-store';
import { makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { DEPENDENCY_MANIFEST_KEY, parseDependencyManifest } from '@podmin/util-dependencies';
import {
  REF_NAME_ANNOTATION,
  blobPath,
  parseImageIndex,
  serializeLayoutIndex,
} from '@podmin/util-oci';
import {
  PAUSE_IMAGE,
  blobBytesOnDisk,
  buildPauseImage,
  offlineDeps,
} from './__fixtures__/pause-image';
import { testBuckets, type TestBucket } from './__fixtures__/test-buckets';
import type { BuildResult } from './build/build-image';
import type { ImageDeps } from './image-deps';
import { DependencyImageMirror } from './mirror';

const PREFIX = `${PAUSE_IMAGE.path}/`;

/** Delegating store that records every write (`method key`) it passes on. */
class WriteCountingStore implements ObjectStore {
  readonly writes: string[] = [];
  constructor(private readonly inner: ObjectStore) {}
  get: ObjectStore['get'] = (k, o) => this.inner.get(k, o);
  getIfChanged: ObjectStore['getIfChanged'] = (k, e, o) => this.inner.getIfChanged(k, e, o);
  head: ObjectStore['head'] = (k) => this.inner.head(k);
  openRead: ObjectStore['openRead'] = (k, o) => this.inner.openRead(k, o);
  list: ObjectStore['list'] = (p, t) => this.inner.list(p, t);
  putIfAbsent: ObjectStore['putIfAbsent'] = (k, b) => {
    this.writes.push(`putIfAbsent ${k}`);
    return this.inner.putIfAbsent(k, b);
  };
  putIfMatch: ObjectStore['putIfMatch'] = (k, b, e) => {
    this.writes.push(`putIfMatch ${k}`);
    return this.inner.putIfMatch(k, b, e);
  };
  put: ObjectStore['put'] = (k, b) => {
    this.writes.push(`put ${k}`);
    return this.inner.put(k, b);
  };
  delete: ObjectStore['delete'] = (k) => {
    this.writes.push(`delete ${k}`);
    return this.inner.delete(k);
  };
}

describe.each(testBuckets('podmin-mirror'))(
  'syncDependencies with the real image mirror on a %s bucket',
  (_label, open) => {
    let work: TempDir;
    let deps: ImageDeps;
    let built: BuildResult;
    let bucket: TestBucket;
    let store: WriteCountingStore;
    let reporter: RecordingReporter;

    beforeEach(async () => {
      work = await makeTempDir('podmin-mirror-cache');
      reporter = new RecordingReporter();
      deps = offlineDeps(work.path, reporter);
      // registry.k8s.io is out of reach here: the store holds a build under the pause name.
      built = await buildPauseImage(deps);
      bucket = await open();
      store = new WriteCountingStore(bucket.objects);
    }, 180_000);
    afterEach(async () => {
      await bucket.cleanup();
      await work.cleanup();
    });

    /** A sync of the image half only: no files, the pause image, the real mirror. */
    const sync = () =>
      syncDependencies(store, ['amd64', 'arm64'], {
        resolver: {
          resolveFiles: () => Promise.resolve([]),
          resolveImages: () => Promise.resolve([PAUSE_IMAGE]),
        },
        cache: { ensureAll: () => Promise.resolve([]) },
        images: new DependencyImageMirror(deps),
        reporter,
      });

    it('uploads once, is present with no write, and repairs a stripped index without blob uploads', async () => {
      const first = await sync();
      expect(first).toMatchObject({ written: true, imagesChanged: ['pause'] });
      const blobWrites = store.writes.filter((w) => w.startsWith(`putIfAbsent ${PREFIX}blobs/`));
      // index, two manifests, two configs, one layer shared by both platforms
      expect(blobWrites).toHaveLength(6);
      expect(store.writes).toEqual([
        ...blobWrites,
        `putIfAbsent ${PREFIX}oci-layout`,
        `putIfAbsent ${PREFIX}index.json`,
        `putIfAbsent ${DEPENDENCY_MANIFEST_KEY}`,
      ]);
      const manifest = parseDependencyManifest((await store.get(DEPENDENCY_MANIFEST_KEY)).body);
      expect(manifest.images).toEqual({
        pause: {
          version: '3.10.1',
          source: 'registry.k8s.io/pause:3.10.1',
          path: 'mirror/registry.k8s.io/pause',
          digest: built.index.digest,
          size: await blobBytesOnDisk(deps.store, 'registry.k8s.io/pause'),
        },
      });
      const published = parseImageIndex((await store.get(`${PREFIX}index.json`)).body);
      expect(published.manifests.map((d) => d.digest)).toEqual([
        built.index.digest,
        ...built.manifests.map((d) => d.digest).sort(),
      ]);
      expect(published.manifests[0]?.annotations?.[REF_NAME_ANNOTATION]).toBe('3.10.1');
      const indexBlob = await store.get(`${PREFIX}${blobPath(built.index.digest)}`);
      expect(indexBlob.body.length).toBe(built.index.size);

      store.writes.length = 0;
      const second = await sync();
      expect(second).toMatchObject({
        written: false,
        imagesChanged: [],
        uploaded: [],
        deleted: [],
      });
      expect(store.writes).toEqual([]);

      // A legacy index: the tag without the nested manifests lifted to top level.
      await bucket.objects.put(
        `${PREFIX}index.json`,
        serializeLayoutIndex({ ...published, manifests: published.manifests.slice(0, 1) }),
      );
      const third = await sync();
      expect(third).toMatchObject({ written: false, imagesChanged: ['pause'] });
      expect(store.writes).toEqual([`putIfMatch ${PREFIX}index.json`]);
      expect(parseImageIndex((await store.get(`${PREFIX}index.json`)).body)).toEqual(published);
      expect(third.manifest).toEqual(manifest);
    }, 180_000);
  },
);
