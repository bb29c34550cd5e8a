import type { ImageMirror } from '@podmin/cli-data-access-dependencies';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { DependencyImageEntry, DesiredImage } from '@podmin/util-dependencies';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  LAYOUT_INDEX_FILE,
  MAX_LAYOUT_INDEX_BYTES,
  MAX_MANIFEST_BYTES,
  blobPath,
  findByDigest,
  findTagged,
  formatReference,
  matchesDigest,
  mirrorReference,
  parseImageIndex,
  parseManifest,
  parseSourceReference,
  repositoryPrefix,
  withTag,
  withUntagged,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex } from '@podmin/util-oci';
import type { IndexMergeOptions } from './bucket-layout';
import { ensureLayoutMarker, mergeIndex, uploadImageContent } from './bucket-layout';
import type { ImageDeps, ImageGraph } from './image-deps';
import { plainDescriptor, readImageGraph } from './image-deps';
import { ensureImage } from './source';
import type { StoredImage } from './source';

/** Options of {@link DependencyImageMirror}. */
export interface DependencyImageMirrorOptions extends IndexMergeOptions {
  /** Parallel blob uploads (default 4). */
  concurrency?: number;
}

/**
 * Unique compressed OCI content bytes reachable from an image's top descriptor: the sum of the
 * sizes of its distinct blobs (the index, every manifest, every config and layer), each digest
 * counted once however many platforms share it. This is the `size` of an image entry in
 * `dependencies/manifest.json`.
 */
export function uniqueContentSize(graph: Pick<ImageGraph, 'manifests' | 'blobs'>): number {
  const sizes = new Map<string, number>();
  for (const { descriptor } of graph.manifests) sizes.set(descriptor.digest, descriptor.size);
  for (const blob of graph.blobs) sizes.set(blob.digest, blob.size);
  let total = 0;
  for (const size of sizes.values()) total += size;
  return total;
}

/** Where an image entry is published: its bucket layout prefix and the tag it carries. */
interface MirrorTarget {
  /** `mirror/<registry>/<repository>/`. */
  prefix: string;
  /** Tag of the source; undefined for a digest-only source. */
  tag: string | undefined;
}

/**
 * The `ImageMirror` of setup and `podmin fetch`: resolves a dependency image into the local
 * image store (pulling it only when absent) and publishes it from there to the bucket's
 * `mirror/<upstream-registry>/<repository>/` layout the same way push does: missing blobs
 * create-only, then `oci-layout`, then `index.json` by ETag compare-and-swap with the tag and
 * every nested manifest descriptor at top level.
 */
export class DependencyImageMirror implements ImageMirror {
  constructor(
    private readonly deps: ImageDeps,
    private readonly options: DependencyImageMirrorOptions = {},
  ) {}

  /** The index digest and unique compressed size of `image.source`, pulled when not stored. */
  async resolve(image: DesiredImage): Promise<{ digest: string; size: number }> {
    const stored = await ensureImage(this.deps, image.source);
    const graph = await readImageGraph(this.deps.store, stored.repository, stored.descriptor);
    return { digest: stored.descriptor.digest, size: uniqueContentSize(graph) };
  }

  /**
   * `present` when the bucket index already tags `entry.digest` and lists every nested
   * manifest at top level (nothing written); `repaired` when only nested descriptors are
   * missing (`index.json` rewritten by compare-and-swap, no blob uploaded); `uploaded`
   * otherwise (missing blobs, `oci-layout`, then `index.json`, from the local store).
   */
  async ensurePublished(
    bucket: ObjectStore,
    entry: DependencyImageEntry,
  ): Promise<'present' | 'repaired' | 'uploaded'> {
    const target = mirrorTarget(entry);
    const indexKey = `${target.prefix}${LAYOUT_INDEX_FILE}`;
    const published = await readBucketIndex(bucket, indexKey);
    const current =
      published === undefined
        ? undefined
        : target.tag === undefined
          ? findByDigest(published, entry.digest)
          : findTagged(published, target.tag);
    if (current?.digest === entry.digest && published !== undefined) {
      const nested = await readPublishedNested(bucket, target.prefix, current);
      if (nested !== undefined) {
        const listed = new Set(published.manifests.map((d) => d.digest));
        if (nested.every((d) => listed.has(d.digest))) return 'present';
        this.deps.reporter.info(
          `Repairing ${indexKey}: listing ${nested.length} nested manifest(s) at top level`,
        );
        await mergeIndex(
          bucket,
          indexKey,
          (index) => publish(index, target, plainDescriptor(current), nested),
          this.options,
        );
        return 'repaired';
      }
    }

    const stored = await this.storedImage(entry);
    const graph = await readImageGraph(this.deps.store, stored.repository, stored.descriptor);
    const name = `${entry.path}@${entry.digest}`;
    const { uploaded, skipped } = await uploadImageContent(
      { store: this.deps.store, repository: stored.repository, reporter: this.deps.reporter },
      bucket,
      graph,
      {
        prefix: target.prefix,
        label: `Mirroring ${entry.source}`,
        ...(this.options.concurrency !== undefined
          ? { concurrency: this.options.concurrency }
          : {}),
      },
    );
    await ensureLayoutMarker(bucket, target.prefix);
    await mergeIndex(
      bucket,
      indexKey,
      (index) => publish(index, target, plainDescriptor(stored.descriptor), graph.nested),
      this.options,
    );
    this.deps.reporter.info(
      `Mirrored ${entry.source} to ${name} (${uploaded} uploaded, ${skipped} already in the bucket)`,
    );
    return 'uploaded';
  }

  /** The image `entry.digest` in the local store, pulled by digest from its source when absent. */
  private storedImage(entry: DependencyImageEntry): Promise<StoredImage> {
    const source = parseSourceReference(entry.source);
    return ensureImage(this.deps, `${source.registry}/${source.repository}@${entry.digest}`);
  }
}

/** Checks that `entry.path` is the mirror of `entry.source` and returns its prefix and tag. */
function mirrorTarget(entry: DependencyImageEntry): MirrorTarget {
  const mirror = mirrorReference(entry.source);
  if (mirror.repository !== entry.path) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `mirroring ${entry.source}: path ${entry.path} is not its mirror ${mirror.repository}`,
    );
  }
  if (mirror.digest !== undefined && mirror.digest !== entry.digest) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `mirroring ${formatReference(mirror)}: the recorded digest is ${entry.digest}`,
    );
  }
  return { prefix: repositoryPrefix(entry.path), tag: mirror.tag };
}

/** The layout index with the image tagged (or listed by digest) and its nested manifests on top. */
function publish(
  index: ImageIndex,
  target: MirrorTarget,
  image: Descriptor,
  nested: readonly Descriptor[],
): ImageIndex {
  return target.tag === undefined
    ? withUntagged(index, [image, ...nested])
    : withTag(index, { tag: target.tag, image, nested });
}

/** The bucket layout's `index.json`, or undefined when there is none yet. */
async function readBucketIndex(bucket: ObjectStore, key: string): Promise<ImageIndex | undefined> {
  try {
    const object = await bucket.get(key, { maxBytes: MAX_LAYOUT_INDEX_BYTES });
    return parseImageIndex(object.body, key);
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
    throw err;
  }
}

/**
 * The manifests nested in a published top-level descriptor, read from its blob in the bucket
 * (empty for a single manifest). Undefined when the blob is missing or does not match its
 * digest: the mirror is incomplete and must be uploaded again.
 */
async function readPublishedNested(
  bucket: ObjectStore,
  prefix: string,
  top: Descriptor,
): Promise<Descriptor[] | undefined> {
  let body: Buffer;
  try {
    body = (await bucket.get(`${prefix}${blobPath(top.digest)}`, { maxBytes: MAX_MANIFEST_BYTES }))
      .body;
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND') || hasCode(err, 'OBJECT_TOO_LARGE')) return undefined;
    throw err;
  }
  if (body.length !== top.size || !matchesDigest(body, top.digest)) return undefined;
  const parsed = parseManifest(body, `manifest ${top.digest}`);
  return parsed.kind === 'index' ? parsed.index.manifests : [];
}
