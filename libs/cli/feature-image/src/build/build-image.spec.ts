import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { LocalImageStore } from '@podmin/cli-data-access-image-store';
import { makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { blobPath, parseImageIndex, parseImageManifest, sha256Digest } from '@podmin/util-oci';
import { QuietReporter } from '../__fixtures__/quiet-reporter';
import { RegistryClient } from '../registry/registry-client';
import { buildImage, hostPlatform, platformMatches } from './build-image';
import { LAYER_GZIP_HEADER } from './layer';

const FIXTURE = path.join(__dirname, '..', '__fixtures__', 'hello-app');

describe('buildImage', () => {
  let work: TempDir;
  beforeEach(async () => {
    work = await makeTempDir('podmin-build');
  });
  afterEach(() => work.cleanup());

  const build = (cache: string, context: string, platforms = ['linux/amd64,linux/arm64']) =>
    buildImage(
      {
        store: new LocalImageStore(cache),
        registry: new RegistryClient(),
        reporter: new QuietReporter(),
      },
      {
        context,
        tags: ['hello:v1'],
        platforms,
        hostPlatform: { os: 'linux', architecture: 'amd64' },
      },
    );

  it('gives identical digests for identical inputs, in different stores and context copies', async () => {
    const copy = path.join(work.path, 'context');
    await cp(FIXTURE, copy, { recursive: true });
    const first = await build(path.join(work.path, 'one'), FIXTURE);
    const second = await build(path.join(work.path, 'two'), copy);
    expect(second.index.digest).toBe(first.index.digest);
    expect(second.manifests.map((m) => m.digest)).toEqual(first.manifests.map((m) => m.digest));
    expect(first.manifests.map((m) => m.platform)).toEqual([
      { os: 'linux', architecture: 'amd64' },
      { os: 'linux', architecture: 'arm64' },
    ]);
  });

  it('writes an index even for one platform, with fixed gzip headers and mtime-0 sorted tars', async () => {
    const cache = path.join(work.path, 'cache');
    const result = await build(cache, FIXTURE, []);
    const layout = path.join(cache, 'registry.podmin.internal', 'apps', 'hello');
    const index = parseImageIndex(await readFile(path.join(layout, blobPath(result.index.digest))));
    expect(index.manifests).toHaveLength(1);
    const manifest = parseImageManifest(
      await readFile(path.join(layout, blobPath(result.manifests[0]!.digest))),
    );
    for (const layer of manifest.layers) {
      const bytes = await readFile(path.join(layout, blobPath(layer.digest)));
      expect(sha256Digest(bytes)).toBe(layer.digest);
      expect(bytes.subarray(0, 10)).toEqual(LAYER_GZIP_HEADER);
      const tar = gunzipSync(bytes);
      const names: string[] = [];
      for (let offset = 0; offset + 512 <= tar.length;) {
        const header = tar.subarray(offset, offset + 512);
        if (header.every((b) => b === 0)) break;
        names.push(header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, ''));
        expect(header.subarray(136, 147).toString()).toBe('00000000000');
        const size = parseInt(header.subarray(124, 136).toString().replace(/\0.*$/s, ''), 8);
        offset += 512 + Math.ceil(size / 512) * 512;
      }
      expect(names).toEqual([...names].sort());
    }
  });

  it('maps the host architecture and matches arm64 variants', () => {
    expect(hostPlatform('x64')).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(hostPlatform('arm64')).toEqual({ os: 'linux', architecture: 'arm64' });
    expect(() => hostPlatform('ia32')).toThrow(/ia32 is not amd64 or arm64/);
    const arm = { os: 'linux', architecture: 'arm64' };
    expect(platformMatches({ ...arm, variant: 'v8' }, arm)).toBe(true);
    expect(
      platformMatches(
        { os: 'linux', architecture: 'arm', variant: 'v7' },
        { os: 'linux', architecture: 'arm', variant: 'v6' },
      ),
    ).toBe(false);
  });
});
