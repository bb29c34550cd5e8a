import { InMemoryObjectStore } from '@podmin/testing';
import { RecordingReporter } from '@podmin/cli-util-io';
import { readDependencyManifest, syncDependencies } from './sync';

describe('readDependencyManifest', () => {
  it('reads an absent manifest as empty without an ETag', async () => {
    const result = await readDependencyManifest(new InMemoryObjectStore());
    expect(result).toEqual({
      manifest: { version: 1, dependencies: {}, images: {} },
      etag: undefined,
      body: undefined,
    });
  });

  it('rejects a corrupt manifest instead of overwriting it', async () => {
    const store = new InMemoryObjectStore();
    await store.put('dependencies/manifest.json', '{"version":1}');
    await expect(readDependencyManifest(store)).rejects.toMatchObject({ code: 'INVALID_MANIFEST' });
  });
});

describe('syncDependencies', () => {
  it('refuses an empty architecture set before touching the bucket', async () => {
    const store = new InMemoryObjectStore();
    const never = () => Promise.reject(new Error('not called'));
    await expect(
      syncDependencies(store, [], {
        resolver: { resolveFiles: never, resolveImages: never },
        cache: { ensureAll: never },
        images: { resolve: never, ensurePublished: never },
        reporter: new RecordingReporter(),
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(store.calls).toEqual([]);
  });
});
