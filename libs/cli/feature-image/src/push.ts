import pLimit from 'p-limit';
import type { ObjectStore } from '@podmin/data-access-object-store';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  LAYOUT_INDEX_FILE,
  MAX_LAYOUT_INDEX_BYTES,
  OCI_LAYOUT_FILE,
  blobPath,
  clusterDestination,
  emptyLayoutIndex,
  formatReference,
  ociLayoutContent,
  parseImageIndex,
  repositoryPrefix,
  serializeLayoutIndex,
  withTag,
  withUntagged,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex, QualifiedReference } from '@podmin/util-oci';
import type { ImageDeps } from './image-deps';
import { plainDescriptor, readImageGraph } from './image-deps';
import { ensureImage } from './source';

/** The object-store methods push needs (the cluster bucket). */
export type ImageBucket = Pick<ObjectStore, 'get' | 'head' | 'putIfAbsent' | 'putIfMatch' | 'put'>;

/** Options of {@link pushImage}. */
export interface PushOptions {
  /** Image to publish: a local build (`hello:v1`) or a source registry reference. */
  source: string;
  /** Cluster destination (`hello:v2`, `registry.podmin.internal/apps/x:y`); derived from the source when absent. */
  destination?: string;
  /** Pull the source again even when it is in the store. */
  pull?: boolean;
  /** Parallel uploads (default 4). */
  concurrency?: number;
  /** Compare-and-swap attempts on `index.json` before giving up (default 10). */
  maxIndexAttempts?: number;
  /** Delay between compare-and-swap attempts (default: random 20–200 ms times the attempt). */
  backoff?: (attempt: number) => Promise<void>;
}

/** Largest blob push reads into memory for one upload (the object-store port takes whole bodies). */
export const MAX_PUSH_BLOB_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/**
 * Publishes an image to the cluster bucket beneath `apps/`: every missing blob (create-only,
 * config and layers, then manifests, then the index), then `oci-layout`, then `index.json` by
 * ETag compare-and-swap (reread and reapply on conflict, bounded) with the tag and every
 * nested manifest descriptor at top level. Until `index.json` is written nothing is visible,
 * so a failed or interrupted push changes nothing a reader sees. Returns the cluster reference.
 */
export async function pushImage(
  deps: ImageDeps,
  bucket: ImageBucket,
  options: PushOptions,
): Promise<QualifiedReference> {
  const { store, reporter } = deps;
  const image = await ensureImage(deps, options.source, { pull: options.pull === true });
  let destination: QualifiedReference;
  if (options.destination !== undefined) {
    destination = clusterDestination(options.source, options.destination);
  } else if (image.local) {
    destination = image.reference;
  } else {
    destination = clusterDestination(formatReference(image.reference));
  }
  if (destination.digest !== undefined && destination.digest !== image.descriptor.digest) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `pushing to ${formatReference(destination)}: the image is ${image.descriptor.digest}`,
    );
  }
  if (destination.tag === undefined && destination.digest === undefined) {
    destination = { ...destination, tag: image.reference.tag ?? 'latest' };
  }
  const name = formatReference(destination);
  const prefix = repositoryPrefix(destination.repository);
  const graph = await readImageGraph(store, image.repository, image.descriptor);
  const top = plainDescriptor(image.descriptor);

  const uploads = [
    ...graph.blobs.map((d) => ({ descriptor: d, bytes: undefined as Buffer | undefined })),
  ];
  const total = uploads.length + graph.manifests.length;
  let done = 0;
  let skipped = 0;
  const label = `Pushing ${name}`;
  reporter.progress(label, 0, total);
  const upload = async (descriptor: Descriptor, bytes: Buffer | undefined): Promise<void> => {
    const key = `${prefix}${blobPath(descriptor.digest)}`;
    let present = false;
    try {
      const head = await bucket.head(key);
      present = head.size === descriptor.size;
      if (!present) reporter.warn(`${key} has the wrong size in the bucket; uploading it again`);
    } catch (err) {
      if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    }
    if (present) {
      skipped++;
    } else {
      const body =
        bytes ??
        (await store.readBlob(image.repository, descriptor.digest, {
          maxBytes: MAX_PUSH_BLOB_BYTES,
          size: descriptor.size,
        }));
      try {
        await bucket.putIfAbsent(key, body);
      } catch (err) {
        if (!hasCode(err, 'PRECONDITION_FAILED')) throw err;
        // Created meanwhile by another push, or present with the wrong size: content addressing
        // makes overwriting with the verified bytes safe.
        await bucket.put(key, body);
      }
    }
    reporter.progress(label, ++done, total);
  };
  const limit = pLimit(options.concurrency ?? 4);
  await Promise.all(uploads.map((u) => limit(() => upload(u.descriptor, u.bytes))));
  // Manifests after their blobs, children before the indexes that list them.
  for (const manifest of graph.manifests) {
    await upload(plainDescriptor(manifest.descriptor), manifest.bytes);
  }

  const layoutKey = `${prefix}${OCI_LAYOUT_FILE}`;
  try {
    await bucket.head(layoutKey);
  } catch (err) {
    if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    try {
      await bucket.putIfAbsent(layoutKey, ociLayoutContent());
    } catch (putErr) {
      if (!hasCode(putErr, 'PRECONDITION_FAILED')) throw putErr;
    }
  }

  const apply = (current: ImageIndex): ImageIndex =>
    destination.tag !== undefined
      ? withTag(current, { tag: destination.tag, image: top, nested: graph.nested })
      : withUntagged(current, [top, ...graph.nested]);
  await mergeIndex(bucket, `${prefix}${LAYOUT_INDEX_FILE}`, apply, options);
  reporter.info(
    `Pushed ${name} (${image.descriptor.digest}; ${total - skipped} uploaded, ${skipped} already in the bucket)`,
  );
  return destination;
}

/** Reads, changes and conditionally writes a bucket `index.json`, retrying on a lost race. */
async function mergeIndex(
  bucket: ImageBucket,
  key: string,
  apply: (current: ImageIndex) => ImageIndex,
  options: PushOptions,
): Promise<void> {
  const attempts = options.maxIndexAttempts ?? 10;
  const backoff =
    options.backoff ??
    ((attempt: number) =>
      new Promise<void>((resolve) => setTimeout(resolve, (20 + Math.random() * 180) * attempt)));
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let current: ImageIndex = emptyLayoutIndex();
    let etag: string | undefined;
    let existing: Buffer | undefined;
    try {
      const object = await bucket.get(key, { maxBytes: MAX_LAYOUT_INDEX_BYTES });
      current = parseImageIndex(object.body, key);
      etag = object.etag;
      existing = object.body;
    } catch (err) {
      if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    }
    const next = serializeLayoutIndex(apply(current));
    if (existing !== undefined && existing.equals(next)) return;
    try {
      if (etag === undefined) await bucket.putIfAbsent(key, next);
      else await bucket.putIfMatch(key, next, etag);
      return;
    } catch (err) {
      if (!hasCode(err, 'PRECONDITION_FAILED')) throw err;
      if (attempt < attempts) await backoff(attempt);
    }
  }
  throw new PodminError(
    'CONFLICT_RETRIES_EXHAUSTED',
    `updating ${key}: it changed under ${attempts} attempts in a row`,
    { hint: 'other pushes to this repository are running; try again' },
  );
}
