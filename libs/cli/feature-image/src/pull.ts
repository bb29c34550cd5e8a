import { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { PodminError } from '@podmin/util-errors';
import {
  computeDigest,
  formatReference,
  isDigest,
  isImageManifestMediaType,
  isIndexMediaType,
  parseDigest,
  parseManifest,
  parseSourceReference,
} from '@podmin/util-oci';
import type { Descriptor, QualifiedReference } from '@podmin/util-oci';
import type { ImageDeps } from './image-deps';

/** Parallel blob downloads. */
const DOWNLOADS = 4;

/** An image now complete in the local store. */
export interface PulledImage {
  /** The source reference with Docker's defaults applied. */
  reference: QualifiedReference;
  /** Store repository (`<registry>/<repository>`). */
  repository: string;
  /** Top-level descriptor (index or manifest). */
  descriptor: Descriptor;
}

/**
 * Imports a complete remote image into the store: the top manifest or index, every nested
 * manifest (all platforms) and every blob, each verified against its digest and size while
 * it streams. Blobs already stored are re-hashed: correct ones are kept, corrupt ones are
 * downloaded again (repaired). The tag is recorded last.
 */
export async function pullImage(
  deps: ImageDeps,
  source: string | QualifiedReference,
): Promise<PulledImage> {
  const { store, registry, reporter } = deps;
  const reference = typeof source === 'string' ? parseSourceReference(source) : source;
  const name = formatReference(reference);
  const repository = store.repositoryOf(reference);
  reporter.info(`Pulling ${name}`);
  const fetchManifest = async (
    ref: string,
    expected: Descriptor | undefined,
  ): Promise<{ descriptor: Descriptor; bytes: Buffer }> => {
    const fetched = await registry.getManifest(reference.registry, reference.repository, ref);
    const wanted = expected?.digest ?? (isDigest(ref) ? ref : fetched.digestHeader);
    const algorithm =
      wanted !== undefined && isDigest(wanted) ? parseDigest(wanted).algorithm : 'sha256';
    const digest = computeDigest(fetched.bytes, algorithm);
    if (wanted !== undefined && digest !== wanted) {
      throw new PodminError(
        'IO_ERROR',
        `pulling ${name}: manifest ${ref} hashes to ${digest}, not ${wanted}`,
      );
    }
    if (expected !== undefined && fetched.bytes.length !== expected.size) {
      throw new PodminError(
        'IO_ERROR',
        `pulling ${name}: manifest ${ref} is ${fetched.bytes.length} bytes, not ${expected.size}`,
      );
    }
    const parsed = parseManifest(fetched.bytes, `manifest ${name}`);
    return {
      bytes: fetched.bytes,
      descriptor: {
        mediaType: expected?.mediaType ?? parsed.mediaType,
        digest,
        size: fetched.bytes.length,
      },
    };
  };
  const top = await fetchManifest(reference.digest ?? reference.tag ?? 'latest', undefined);
  const manifests: Array<{ descriptor: Descriptor; bytes: Buffer }> = [];
  const blobs = new Map<string, Descriptor>();
  let nested: Descriptor[] = [];
  const visit = async (
    item: { descriptor: Descriptor; bytes: Buffer },
    depth: number,
  ): Promise<void> => {
    const parsed = parseManifest(item.bytes, `manifest ${item.descriptor.digest}`);
    if (parsed.kind === 'index') {
      if (depth > 3)
        throw new PodminError('INVALID_ARGUMENT', `pulling ${name}: indexes nested too deeply`);
      if (depth === 0) nested = parsed.index.manifests;
      for (const child of parsed.index.manifests) {
        if (isIndexMediaType(child.mediaType) || isImageManifestMediaType(child.mediaType)) {
          await visit(await fetchManifest(child.digest, child), depth + 1);
        } else {
          blobs.set(child.digest, child);
        }
      }
    } else {
      for (const blob of [parsed.manifest.config, ...parsed.manifest.layers])
        blobs.set(blob.digest, blob);
    }
    manifests.push(item);
  };
  await visit(top, 0);

  const all = [...blobs.values()];
  const total = all.length;
  const totalBytes = all.reduce((sum, blob) => sum + blob.size, 0);
  let doneBytes = 0;
  let repaired = 0;
  const label = `Downloading ${name}`;
  reporter.progress(label, 0, totalBytes, 'bytes');
  const limit = pLimit(DOWNLOADS);
  await Promise.all(
    all.map((blob) =>
      limit(async () => {
        const state = await store.blobState(repository, blob.digest, blob.size);
        if (state !== 'present') {
          if (state === 'corrupt') {
            repaired++;
            reporter.warn(
              `blob ${blob.digest} in the image store is corrupt; downloading it again`,
            );
          }
          const download = await registry.openBlob(
            reference.registry,
            reference.repository,
            blob.digest,
          );
          if (download.size !== undefined && download.size !== blob.size) {
            download.stream.destroy();
            throw new PodminError(
              'IO_ERROR',
              `pulling ${name}: blob ${blob.digest} is ${download.size} bytes, the manifest says ${blob.size}`,
            );
          }
          let received = 0;
          const counted = countBytes(download.stream, (n) => {
            received += n;
            doneBytes += n;
            reporter.progress(label, doneBytes, totalBytes, 'bytes');
          });
          await store.writeBlobStream(repository, counted, {
            digest: blob.digest,
            size: blob.size,
          });
          // The store verified the size; count what a short stream did not report.
          doneBytes += blob.size - received;
        } else {
          doneBytes += blob.size;
        }
        reporter.progress(label, doneBytes, totalBytes, 'bytes');
      }),
    ),
  );
  for (const manifest of manifests) {
    await store.writeBlob(repository, manifest.bytes, manifest.descriptor.digest);
  }
  if (reference.tag !== undefined) {
    await store.tag(repository, { tag: reference.tag, image: top.descriptor, nested });
  } else {
    await store.addUntagged(repository, [top.descriptor, ...nested]);
  }
  reporter.info(
    `Pulled ${name} (${top.descriptor.digest}, ${nested.length || 1} manifest(s), ${total} blob(s)${repaired > 0 ? `, ${repaired} repaired` : ''})`,
  );
  return { reference, repository, descriptor: top.descriptor };
}

/** `source` passed through unchanged, calling `onBytes` with the size of each chunk. */
function countBytes(source: Readable, onBytes: (bytes: number) => void): Readable {
  // An async generator keeps backpressure and errors: the consumer pulls each chunk, a source
  // error rejects the iteration, and destroying the result destroys the source.
  return Readable.from(
    (async function* () {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        onBytes(chunk.length);
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
}
