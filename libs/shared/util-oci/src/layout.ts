import { canonicalJsonBytes } from './canonical-json';
import type { Descriptor } from './descriptor';
import { parseDigest } from './digest';
import { OciFormatError } from './errors';
import type { ImageIndex } from './manifest';
import { OCI_INDEX_MEDIA_TYPE, isIndexMediaType } from './media-types';
import { isValidTag } from './reference';
import { isJsonObject, parseStrictJson } from './strict-json';

/** File name of the OCI layout marker. */
export const OCI_LAYOUT_FILE = 'oci-layout';
/** File name of a layout's top-level index. */
export const LAYOUT_INDEX_FILE = 'index.json';
/** Layout version podmin writes and accepts. */
export const OCI_LAYOUT_VERSION = '1.0.0';
/** Annotation naming the tag of a top-level descriptor in an OCI layout. */
export const REF_NAME_ANNOTATION = 'org.opencontainers.image.ref.name';
/** Largest layout `index.json` podmin reads (tags plus every nested manifest). */
export const MAX_LAYOUT_INDEX_BYTES = 8 * 1024 * 1024;

/** The exact bytes of an `oci-layout` file: `{"imageLayoutVersion":"1.0.0"}`. */
export function ociLayoutContent(): Buffer {
  return canonicalJsonBytes({ imageLayoutVersion: OCI_LAYOUT_VERSION });
}

/** Validates the content of an `oci-layout` file; OciFormatError unless version 1.0.0. */
export function parseOciLayout(bytes: Buffer | string): void {
  const json = parseStrictJson(bytes, OCI_LAYOUT_FILE, { maxBytes: 4096 });
  if (!isJsonObject(json) || json['imageLayoutVersion'] !== OCI_LAYOUT_VERSION) {
    throw new OciFormatError(
      `parsing ${OCI_LAYOUT_FILE}: imageLayoutVersion must be "${OCI_LAYOUT_VERSION}"`,
    );
  }
}

/** Path of a blob inside a layout: `blobs/<algorithm>/<hex>`. */
export function blobPath(digest: string): string {
  const { algorithm, hex } = parseDigest(digest);
  return `blobs/${algorithm}/${hex}`;
}

/** The tag a top-level layout descriptor carries, if any. */
export function refName(descriptor: Descriptor): string | undefined {
  return descriptor.annotations?.[REF_NAME_ANNOTATION];
}

/** An empty OCI image index, the starting point of a new layout. */
export function emptyLayoutIndex(): ImageIndex {
  return { schemaVersion: 2, mediaType: OCI_INDEX_MEDIA_TYPE, manifests: [] };
}

/** Finds the top-level descriptor tagged `tag` in a layout index. */
export function findTagged(index: ImageIndex, tag: string): Descriptor | undefined {
  return index.manifests.find((d) => refName(d) === tag);
}

/** Finds a top-level descriptor by digest (tagged, or a nested manifest lifted to the top). */
export function findByDigest(index: ImageIndex, digest: string): Descriptor | undefined {
  return index.manifests.find((d) => d.digest === digest);
}

/** What to publish in a layout's `index.json`: a tag, its image, and the image's nested manifests. */
export interface TagUpdate {
  /** Tag to point at `image`. */
  tag: string;
  /** Descriptor of the image (an index or a single manifest), without annotations needed. */
  image: Descriptor;
  /**
   * Descriptors of every manifest nested inside `image` when it is an index (each with its
   * platform), lifted to the top level so the registry resolves digest requests from
   * `index.json` alone.
   */
  nested: readonly Descriptor[];
}

/**
 * Returns the layout index after pointing `update.tag` at `update.image`: the tag moves off any
 * earlier descriptor, the image gets the `org.opencontainers.image.ref.name` annotation, and
 * every nested manifest descriptor appears once at top level without a tag. Earlier untagged
 * entries are kept (knowing which are orphaned would need every tagged index; the registry
 * does no garbage collection). Entries are ordered tags first (by tag), then untagged (by
 * digest), so equal inputs give byte-identical `index.json`.
 */
export function withTag(current: ImageIndex, update: TagUpdate): ImageIndex {
  if (!isValidTag(update.tag)) {
    throw new OciFormatError(
      `tagging ${update.image.digest}: ${JSON.stringify(update.tag)} is not a valid tag`,
    );
  }
  const tagged = current.manifests.filter(
    (d) => refName(d) !== undefined && refName(d) !== update.tag,
  );
  tagged.push({
    ...stripRefName(update.image),
    annotations: { ...update.image.annotations, [REF_NAME_ANNOTATION]: update.tag },
  });
  const untagged = new Map<string, Descriptor>();
  for (const d of current.manifests) {
    if (refName(d) === undefined) untagged.set(d.digest, d);
  }
  for (const d of update.nested) {
    untagged.set(d.digest, stripRefName(d));
  }
  const manifests = [
    ...tagged.sort((a, b) => compare(refName(a) ?? '', refName(b) ?? '')),
    ...[...untagged.values()].sort((a, b) => compare(a.digest, b.digest)),
  ];
  return {
    ...current,
    schemaVersion: 2,
    mediaType: current.mediaType ?? OCI_INDEX_MEDIA_TYPE,
    manifests,
  };
}

/**
 * Returns the layout index with `descriptors` present once each at top level without a tag
 * (for a digest-only publication: the image and its nested manifests). Tags are unchanged;
 * the order is the same as {@link withTag}'s, so equal inputs give byte-identical `index.json`.
 */
export function withUntagged(current: ImageIndex, descriptors: readonly Descriptor[]): ImageIndex {
  const tagged = current.manifests.filter((d) => refName(d) !== undefined);
  const untagged = new Map<string, Descriptor>();
  for (const d of current.manifests) {
    if (refName(d) === undefined) untagged.set(d.digest, d);
  }
  for (const d of descriptors) {
    untagged.set(d.digest, stripRefName(d));
  }
  return {
    ...current,
    schemaVersion: 2,
    mediaType: current.mediaType ?? OCI_INDEX_MEDIA_TYPE,
    manifests: [
      ...tagged.sort((a, b) => compare(refName(a) ?? '', refName(b) ?? '')),
      ...[...untagged.values()].sort((a, b) => compare(a.digest, b.digest)),
    ],
  };
}

/**
 * Checks that every nested manifest of each tagged index is present at top level; returns the
 * missing descriptors (empty when the layout is complete). `nestedOf` gives the manifests of a
 * tagged index, read from its blob.
 */
export function missingNested(
  index: ImageIndex,
  nestedOf: (image: Descriptor) => readonly Descriptor[],
): Descriptor[] {
  const present = new Set(index.manifests.map((d) => d.digest));
  const missing: Descriptor[] = [];
  for (const d of index.manifests) {
    if (refName(d) === undefined || !isIndexMediaType(d.mediaType)) continue;
    for (const nested of nestedOf(d)) {
      if (!present.has(nested.digest)) {
        present.add(nested.digest);
        missing.push(nested);
      }
    }
  }
  return missing;
}

/** Serialises a layout index deterministically (sorted keys, no whitespace). */
export function serializeLayoutIndex(index: ImageIndex): Buffer {
  return canonicalJsonBytes(index);
}

function stripRefName(d: Descriptor): Descriptor {
  if (d.annotations === undefined || !(REF_NAME_ANNOTATION in d.annotations)) {
    return { ...d };
  }
  const annotations = { ...d.annotations };
  delete annotations[REF_NAME_ANNOTATION];
  const copy: Descriptor = { ...d, annotations };
  if (Object.keys(annotations).length === 0) {
    delete copy.annotations;
  }
  return copy;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
