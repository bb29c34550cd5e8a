import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { makeTempDir } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import {
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  findTagged,
  sha256Digest,
} from '@podmin/util-oci';
import { CorruptBlobError } from './errors';
import { LocalImageStore } from './image-store';

describe('LocalImageStore', () => {
  let dir: TempDir;
  let store: LocalImageStore;
  const repo = 'registry.podmin.internal/apps/hello';

  beforeEach(async () => {
    dir = await makeTempDir('podmin-image-store');
    store = LocalImageStore.inCache(dir.path);
  });
  afterEach(() => dir.cleanup());

  it('keeps one OCI layout per repository under <cache>/oci, tags as ref.name annotations', async () => {
    const blob = await store.writeBlob(repo, Buffer.from('{}'));
    const image = { mediaType: OCI_INDEX_MEDIA_TYPE, ...blob };
    const nested = {
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      digest: sha256Digest('m'),
      size: 1,
      platform: { os: 'linux', architecture: 'arm64' },
    };
    await store.tag(repo, { tag: 'v1', image, nested: [nested] });
    const layout = path.join(dir.path, 'oci', 'registry.podmin.internal', 'apps', 'hello');
    expect((await readdir(layout)).sort()).toEqual(['blobs', 'index.json', 'oci-layout']);
    expect(await readFile(path.join(layout, 'oci-layout'), 'utf8')).toBe(
      '{"imageLayoutVersion":"1.0.0"}',
    );
    const index = await store.readIndex(repo);
    expect(findTagged(index, 'v1')?.digest).toBe(blob.digest);
    expect(index.manifests).toHaveLength(2);
    expect(
      await store.resolve({
        registry: 'registry.podmin.internal',
        repository: 'apps/hello',
        tag: 'v1',
        digest: undefined,
      }),
    ).toMatchObject({ digest: blob.digest });
    expect(
      await store.resolve({
        registry: 'registry.podmin.internal',
        repository: 'apps/hello',
        tag: 'v2',
        digest: undefined,
      }),
    ).toBeUndefined();
    expect(await store.readIndex('docker.io/library/none')).toEqual({
      schemaVersion: 2,
      mediaType: OCI_INDEX_MEDIA_TYPE,
      manifests: [],
    });
  });

  it('verifies digests on read and detects corrupt and missing blobs', async () => {
    const { digest, size } = await store.writeBlob(repo, Buffer.from('layer bytes'));
    expect(await store.blobState(repo, digest, size)).toBe('present');
    expect((await store.readBlob(repo, digest, { maxBytes: 100 })).toString()).toBe('layer bytes');
    await writeFile(store.blobFile(repo, digest), 'layer bytez');
    expect(await store.blobState(repo, digest, size)).toBe('corrupt');
    await expect(store.readBlob(repo, digest, { maxBytes: 100 })).rejects.toBeInstanceOf(
      CorruptBlobError,
    );
    await expect(store.readBlob(repo, digest, { maxBytes: 5 })).rejects.toThrow(
      /over the 5-byte limit/,
    );
    expect(await store.blobState(repo, sha256Digest('absent'))).toBe('missing');
    await expect(
      store.readBlob(repo, sha256Digest('absent'), { maxBytes: 10 }),
    ).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
  });

  it('stores a streamed blob only when digest and size match, and leaves no temp files', async () => {
    const bytes = Buffer.from('streamed content');
    await expect(
      store.writeBlobStream(repo, Readable.from([bytes]), {
        digest: sha256Digest('other'),
        size: bytes.length,
      }),
    ).rejects.toBeInstanceOf(CorruptBlobError);
    expect(await store.blobState(repo, sha256Digest('other'))).toBe('missing');
    await store.writeBlobStream(repo, Readable.from([bytes]), {
      digest: sha256Digest(bytes),
      size: bytes.length,
    });
    expect(await store.blobState(repo, sha256Digest(bytes), bytes.length)).toBe('present');
    expect(await readdir(store.tempDir())).toEqual([]);
    await expect(store.writeBlob(repo, bytes, sha256Digest('x'))).rejects.toBeInstanceOf(
      CorruptBlobError,
    );
  });

  it('serialises concurrent tag updates of one repository', async () => {
    const { digest, size } = await store.writeBlob(repo, Buffer.from('{}'));
    const tags = Array.from({ length: 10 }, (_, i) => `t${i}`);
    await Promise.all(
      tags.map((tag) =>
        store.tag(repo, {
          tag,
          image: { mediaType: OCI_INDEX_MEDIA_TYPE, digest, size },
          nested: [],
        }),
      ),
    );
    const index = await store.readIndex(repo);
    expect(tags.every((t) => findTagged(index, t) !== undefined)).toBe(true);
  });

  it('copies blobs between repositories and refuses path tricks', async () => {
    const { digest, size } = await store.writeBlob(repo, Buffer.from('shared'));
    await store.copyBlob(repo, 'ghcr.io/acme/hello', digest, size);
    expect(await store.blobState('ghcr.io/acme/hello', digest, size)).toBe('present');
    expect(() => store.layoutDir('../etc')).toThrow(/must be <registry>\/<repository>/);
    expect(() => store.layoutDir('a/../../b')).toThrow(/must be/);
  });
});
