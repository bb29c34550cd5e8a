import pLimit from 'p-limit';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { LocalImageStore } from '@podmin/cli-data-access-image-store';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  MAX_LAYOUT_INDEX_BYTES,
  OCI_LAYOUT_FILE,
  blobPath,
  emptyLayoutIndex,
  ociLayoutContent,
  parseImageIndex,
  serializeLayoutIndex,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex } from '@podmin/util-oci';
import type { ImageGraph, ImageReporter } from './image-deps';
import { plainDescriptor } from './image-deps';

/** The object-store methods publishing an OCI layout needs (the cluster bucket). */
export type ImageBucket = Pick<ObjectStore, 'get' | 'head' | 'putIfAbsent' | 'putIfMatch' | 'put'>;

/** Largest blob read into memory for one upload (the object-store port takes whole bodies). */
export const MAX_PUSH_BLOB_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/** Compare-and-swap tuning of {@link mergeIndex}. */
export interface IndexMergeOptions {
  /** Compare-and-swap attempts on `index.json` before giving up (default 10). */
  maxIndexAttempts?: number;
  /** Delay between compare-and-swap attempts (default: random 20–200 ms times the attempt). */
  backoff?: (attempt: number) => Promise<void>;
}

/** How many parts of an image {@link uploadImageContent} wrote and found already present. */
export interface UploadCount {
  /** Blobs and manifests written. */
  uploaded: number;
  /** Blobs and manifests already in the bucket with the right size. */
  skipped: number;
}

/**
 * Uploads every part of a stored image that the bucket lacks beneath `prefix`, create-only:
 * config and layer blobs (bounded concurrency), then manifests, children before the indexes
 * that list them. A blob present with the right size is skipped.
 */
export async function uploadImageContent(
  source: { store: LocalImageStore; repository: string; reporter: ImageReporter },
  bucket: ImageBucket,
  graph: ImageGraph,
  options: { prefix: string; label: string; concurrency?: number },
): Promise<UploadCount> {
  const { store, repository, reporter } = source;
  const parts = graph.blobs.length + graph.manifests.length;
  // Progress counts bytes (what takes time); a part already in the bucket counts as done.
  const totalBytes =
    graph.blobs.reduce((sum, d) => sum + d.size, 0) +
    graph.manifests.reduce((sum, m) => sum + m.bytes.length, 0);
  let doneBytes = 0;
  let skipped = 0;
  reporter.progress(options.label, 0, totalBytes, 'bytes');
  const upload = async (descriptor: Descriptor, bytes: Buffer | undefined): Promise<void> => {
    const key = `${options.prefix}${blobPath(descriptor.digest)}`;
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
        (await store.readBlob(repository, descriptor.digest, {
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
    doneBytes += bytes?.length ?? descriptor.size;
    reporter.progress(options.label, doneBytes, totalBytes, 'bytes');
  };
  const limit = pLimit(options.concurrency ?? 4);
  await Promise.all(graph.blobs.map((d) => limit(() => upload(d, undefined))));
  for (const manifest of graph.manifests) {
    await upload(plainDescriptor(manifest.descriptor), manifest.bytes);
  }
  return { uploaded: parts - skipped, skipped };
}

/** Writes `<prefix>oci-layout` create-only unless it already exists. */
export async function ensureLayoutMarker(bucket: ImageBucket, prefix: string): Promise<void> {
  const key = `${prefix}${OCI_LAYOUT_FILE}`;
  try {
    await bucket.head(key);
  } catch (err) {
    if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    try {
      await bucket.putIfAbsent(key, ociLayoutContent());
    } catch (putErr) {
      if (!hasCode(putErr, 'PRECONDITION_FAILED')) throw putErr;
    }
  }
}

/**
 * Reads, changes and conditionally writes a bucket `index.json` (create-only when absent, else
 * by ETag), rereading and reapplying on a lost race (bounded: CONFLICT_RETRIES_EXHAUSTED).
 * Nothing is written when the result equals the stored bytes. Returns whether it wrote.
 */
export async function mergeIndex(
  bucket: ImageBucket,
  key: string,
  apply: (current: ImageIndex) => ImageIndex,
  options: IndexMergeOptions = {},
): Promise<boolean> {
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
    if (existing !== undefined && existing.equals(next)) return false;
    try {
      if (etag === undefined) await bucket.putIfAbsent(key, next);
      else await bucket.putIfMatch(key, next, etag);
      return true;
    } catch (err) {
      // CONFLICT (S3's 409) asks for the same reread and retry as a lost compare-and-swap.
      if (!hasCode(err, 'PRECONDITION_FAILED') && !hasCode(err, 'CONFLICT')) throw err;
      if (attempt < attempts) await backoff(attempt);
    }
  }
  throw new PodminError(
    'CONFLICT_RETRIES_EXHAUSTED',
    `updating ${key}: it changed under ${attempts} attempts in a row`,
    { hint: 'other pushes to this repository are running; try again' },
  );
}
