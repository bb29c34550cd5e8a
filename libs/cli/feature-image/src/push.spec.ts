import path from 'node:path';
import { LocalImageStore } from '@podmin/cli-data-access-image-store';
import { InMemoryObjectStore, makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { REF_NAME_ANNOTATION, formatReference, parseImageIndex } from '@podmin/util-oci';
import { resolveClusterImage } from '@podmin/util-manifest';
import { QuietReporter } from './__fixtures__/quiet-reporter';
import { buildImage } from './build/build-image';
import type { ImageDeps } from './image-deps';
import { pushImage } from './push';
import { RegistryClient } from './registry/registry-client';

const FIXTURE = path.join(__dirname, '__fixtures__', 'hello-app');

describe('pushImage', () => {
  let work: TempDir;
  let deps: ImageDeps;
  let reporter: QuietReporter;

  beforeAll(async () => {
    work = await makeTempDir('podmin-push');
    reporter = new QuietReporter();
    deps = {
      store: new LocalImageStore(path.join(work.path, 'oci')),
      registry: new RegistryClient(),
      reporter,
    };
    await buildImage(deps, {
      context: FIXTURE,
      tags: ['hello:v1'],
      platforms: ['linux/amd64', 'linux/arm64'],
      hostPlatform: { os: 'linux', architecture: 'amd64' },
    });
  });
  afterAll(() => work.cleanup());

  const tagsIn = async (bucket: InMemoryObjectStore, repo: string): Promise<string[]> =>
    parseImageIndex((await bucket.get(`${repo}/index.json`)).body)
      .manifests.map((d) => d.annotations?.[REF_NAME_ANNOTATION])
      .filter((t): t is string => t !== undefined);

  it('uploads blobs, then oci-layout, then index.json with every nested manifest', async () => {
    const bucket = new InMemoryObjectStore();
    const pushed = await pushImage(deps, bucket, { source: 'hello:v1' });
    expect(pushed).toMatchObject({
      registry: 'registry.podmin.internal',
      repository: 'apps/hello',
      tag: 'v1',
    });
    const writes = bucket.calls.filter((c) => c.startsWith('put'));
    expect(writes.at(-1)).toBe('putIfAbsent apps/hello/index.json');
    expect(writes.at(-2)).toBe('putIfAbsent apps/hello/oci-layout');
    expect(writes.slice(0, -2).every((c) => c.includes('/blobs/sha256/'))).toBe(true);
    const index = parseImageIndex((await bucket.get('apps/hello/index.json')).body);
    expect(
      index.manifests.map((d) => d.platform?.architecture ?? d.annotations?.[REF_NAME_ANNOTATION]),
    ).toEqual(['v1', ...index.manifests.slice(1).map((d) => d.platform?.architecture)]);
    expect(
      index.manifests
        .slice(1)
        .map((d) => d.platform?.architecture)
        .sort(),
    ).toEqual(['amd64', 'arm64']);

    bucket.calls.length = 0;
    await pushImage(deps, bucket, { source: 'hello:v1', destination: 'hello:v2' });
    expect(bucket.calls.filter((c) => c.startsWith('putIfAbsent apps/hello/blobs'))).toEqual([]);
    expect(await tagsIn(bucket, 'apps/hello')).toEqual(['v1', 'v2']);
  });

  it('reports progress in bytes, from none to every byte of the image', async () => {
    const bucket = new InMemoryObjectStore();
    reporter.progressEvents.length = 0;
    await pushImage(deps, bucket, { source: 'hello:v1' });
    const events = reporter.progressEvents;
    const total = events[0]?.total ?? 0;
    expect(events[0]).toMatchObject({ done: 0, unit: 'bytes' });
    expect(total).toBeGreaterThan(1000);
    expect(events.at(-1)).toMatchObject({ done: total, total, unit: 'bytes' });
    const done = events.map((e) => e.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
  });

  it('loses no tag when eight pushes race on one repository', async () => {
    const bucket = new InMemoryObjectStore();
    const tags = Array.from({ length: 8 }, (_, i) => `race-${i}`);
    await Promise.all(
      tags.map((tag) =>
        pushImage(deps, bucket, {
          source: 'hello:v1',
          destination: `hello:${tag}`,
          backoff: () => new Promise((r) => setImmediate(r)),
        }),
      ),
    );
    expect(await tagsIn(bucket, 'apps/hello')).toEqual(tags);
  });

  it('leaves index.json unchanged when the push fails after the blobs', async () => {
    const bucket = new InMemoryObjectStore();
    await pushImage(deps, bucket, { source: 'hello:v1' });
    const before = (await bucket.get('apps/hello/index.json')).body;
    const failing = Object.assign(Object.create(bucket) as InMemoryObjectStore, {
      putIfMatch: () => Promise.reject(new PodminError('BUCKET_UNAVAILABLE', 'connection reset')),
    });
    await expect(
      pushImage(deps, failing, { source: 'hello:v1', destination: 'hello:v9' }),
    ).rejects.toThrow(/connection reset/);
    expect((await bucket.get('apps/hello/index.json')).body).toEqual(before);
  });

  it('retries index.json after an S3 409 ConditionalRequestConflict (CONFLICT)', async () => {
    const bucket = new InMemoryObjectStore();
    await pushImage(deps, bucket, { source: 'hello:v1' });
    let conflicts = 0;
    bucket.beforeConditionalWrite = (key) => {
      if (key.endsWith('index.json') && conflicts++ === 0)
        throw new PodminError('CONFLICT', `replacing ${key}: a concurrent write was in progress`);
    };
    await pushImage(deps, bucket, {
      source: 'hello:v1',
      destination: 'hello:v4',
      backoff: () => Promise.resolve(),
    });
    expect(conflicts).toBe(2);
    expect(await tagsIn(bucket, 'apps/hello')).toEqual(['v1', 'v4']);
  });

  it('gives up after bounded conflicts', async () => {
    const bucket = new InMemoryObjectStore();
    await pushImage(deps, bucket, { source: 'hello:v1' });
    bucket.beforeConditionalWrite = (key) => {
      if (key.endsWith('index.json'))
        void bucket.put(key, bucket.objects.get(key)!.body.toString() + ' ');
    };
    await expect(
      pushImage(deps, bucket, {
        source: 'hello:v1',
        destination: 'hello:v3',
        maxIndexAttempts: 3,
        backoff: () => Promise.resolve(),
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT_RETRIES_EXHAUSTED' });
  });

  it('publishes a tagless destination as :latest, which is what --image resolves it to (issue 31)', async () => {
    const bucket = new InMemoryObjectStore();
    const pushed = await pushImage(deps, bucket, { source: 'hello:v1', destination: 'web' });
    expect(formatReference(pushed)).toBe('registry.podmin.internal/apps/web:latest');
    expect(formatReference(pushed)).toBe(resolveClusterImage('web', '--image'));
    expect(await tagsIn(bucket, 'apps/web')).toEqual(['latest']);
  });

  it('refuses a mirror/ destination and an unknown local image', async () => {
    const bucket = new InMemoryObjectStore();
    await expect(
      pushImage(deps, bucket, {
        source: 'hello:v1',
        destination: 'registry.podmin.internal/mirror/x/y:1',
      }),
    ).rejects.toThrow(/reserved/);
    await expect(
      pushImage(deps, bucket, { source: 'registry.podmin.internal/apps/nope:v1' }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
