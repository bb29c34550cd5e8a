import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LocalImageStore } from '@podmin/cli-data-access-image-store';
import type { DesiredImage } from '@podmin/util-dependencies';
import { buildImage } from '../build/build-image';
import type { BuildResult } from '../build/build-image';
import type { ImageDeps, ImageReporter } from '../image-deps';
import { RegistryClient } from '../registry/registry-client';

/** The pause image source the fixtures stand in for. */
export const PAUSE_SOURCE = 'registry.k8s.io/pause:3.10.1';

/** The pause image as the dependency catalog names it, mirrored below `mirror/`. */
export const PAUSE_IMAGE: DesiredImage = {
  name: 'pause',
  version: '3.10.1',
  source: PAUSE_SOURCE,
  path: 'mirror/registry.k8s.io/pause',
};

/** A registry client whose every request fails: proves a test never pulls (and this machine cannot). */
export function offlineRegistry(): RegistryClient {
  return new RegistryClient({
    fetch: (input) => Promise.reject(new Error(`no network in tests: ${String(input as string)}`)),
  });
}

/** Image deps over a fresh store in `dir` that cannot reach any registry. */
export function offlineDeps(dir: string, reporter: ImageReporter): ImageDeps {
  return {
    store: new LocalImageStore(path.join(dir, 'oci')),
    registry: offlineRegistry(),
    reporter,
  };
}

/**
 * Seeds the local store with a stand-in for `registry.k8s.io/pause` built from
 * `__fixtures__/pause` (FROM scratch, linux/amd64 and linux/arm64) under `source`.
 */
export function buildPauseImage(deps: ImageDeps, source = PAUSE_SOURCE): Promise<BuildResult> {
  return buildImage(deps, {
    context: path.join(__dirname, 'pause'),
    tags: [source],
    platforms: ['linux/amd64', 'linux/arm64'],
    hostPlatform: { os: 'linux', architecture: 'amd64' },
  });
}

/** Sum of the sizes of every blob file in a store repository: its unique content bytes. */
export async function blobBytesOnDisk(store: LocalImageStore, repository: string): Promise<number> {
  const dir = path.join(store.layoutDir(repository), 'blobs', 'sha256');
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(path.join(dir, name))).size;
  return total;
}
