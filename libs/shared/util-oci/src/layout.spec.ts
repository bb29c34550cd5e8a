import type { Descriptor } from './descriptor';
import { sha256Digest, sha512Digest } from './digest';
import {
  REF_NAME_ANNOTATION,
  blobPath,
  emptyLayoutIndex,
  findByDigest,
  findTagged,
  missingNested,
  ociLayoutContent,
  parseOciLayout,
  serializeLayoutIndex,
  withTag,
  withUntagged,
} from './layout';
import { parseImageIndex } from './manifest';
import { OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from './media-types';

const manifestFor = (arch: string): Descriptor => ({
  mediaType: OCI_MANIFEST_MEDIA_TYPE,
  digest: sha256Digest(arch),
  size: 100,
  platform: { os: 'linux', architecture: arch },
});
const imageIndex = (name: string): Descriptor => ({
  mediaType: OCI_INDEX_MEDIA_TYPE,
  digest: sha256Digest(name),
  size: 300,
});

describe('OCI layout', () => {
  it('writes and checks oci-layout', () => {
    expect(ociLayoutContent().toString()).toBe('{"imageLayoutVersion":"1.0.0"}');
    expect(() => parseOciLayout(ociLayoutContent())).not.toThrow();
    expect(() => parseOciLayout('{"imageLayoutVersion":"2"}')).toThrow(/1.0.0/);
  });

  it('places blobs by algorithm', () => {
    expect(blobPath(sha256Digest('a'))).toBe(`blobs/sha256/${sha256Digest('a').slice(7)}`);
    expect(blobPath(sha512Digest('a'))).toMatch(/^blobs\/sha512\/[0-9a-f]{128}$/);
  });

  it('lifts nested manifests to the top level and moves tags', () => {
    const amd = manifestFor('amd64');
    const arm = manifestFor('arm64');
    let index = withTag(emptyLayoutIndex(), {
      tag: 'v1',
      image: imageIndex('one'),
      nested: [amd, arm],
    });
    expect(findTagged(index, 'v1')?.digest).toBe(sha256Digest('one'));
    expect(findByDigest(index, arm.digest)?.platform?.architecture).toBe('arm64');
    expect(index.manifests).toHaveLength(3);

    index = withTag(index, { tag: 'v2', image: imageIndex('two'), nested: [amd] });
    index = withTag(index, { tag: 'v1', image: imageIndex('three'), nested: [] });
    expect(index.manifests.map((d) => d.annotations?.[REF_NAME_ANNOTATION] ?? d.digest)).toEqual([
      'v1',
      'v2',
      ...[amd.digest, arm.digest].sort(),
    ]);
    expect(findTagged(index, 'v1')?.digest).toBe(sha256Digest('three'));
    expect(findByDigest(index, sha256Digest('one'))).toBeUndefined();
    expect(() => withTag(index, { tag: '-bad', image: imageIndex('x'), nested: [] })).toThrow(
      /not a valid tag/,
    );
  });

  it('serialises deterministically and round-trips through the strict parser', () => {
    const a = withTag(emptyLayoutIndex(), {
      tag: 'v1',
      image: imageIndex('one'),
      nested: [manifestFor('arm64'), manifestFor('amd64')],
    });
    const b = withTag(emptyLayoutIndex(), {
      tag: 'v1',
      image: imageIndex('one'),
      nested: [manifestFor('amd64'), manifestFor('arm64')],
    });
    expect(serializeLayoutIndex(a).equals(serializeLayoutIndex(b))).toBe(true);
    expect(parseImageIndex(serializeLayoutIndex(a))).toEqual(a);
  });

  it('reports nested manifests missing from the top level', () => {
    const amd = manifestFor('amd64');
    const arm = manifestFor('arm64');
    const legacy = {
      schemaVersion: 2 as const,
      manifests: [{ ...imageIndex('one'), annotations: { [REF_NAME_ANNOTATION]: 'v1' } }, amd],
    };
    expect(missingNested(legacy, () => [amd, arm])).toEqual([arm]);
  });

  it('adds untagged descriptors once, keeping tags and the canonical order', () => {
    const amd = manifestFor('amd64');
    const tagged = withTag(emptyLayoutIndex(), { tag: 'v1', image: imageIndex('one'), nested: [] });
    const index = withUntagged(tagged, [imageIndex('two'), amd, amd]);
    expect(findTagged(index, 'v1')?.digest).toBe(sha256Digest('one'));
    expect(index.manifests.slice(1).map((d) => d.digest)).toEqual(
      [imageIndex('two').digest, amd.digest].sort(),
    );
    expect(serializeLayoutIndex(withUntagged(index, [amd]))).toEqual(serializeLayoutIndex(index));
  });
});
