import { PodminError } from '@podmin/util-errors';
import {
  DEFAULT_TAG,
  LAYOUT_INDEX_FILE,
  clusterDestination,
  formatReference,
  repositoryPrefix,
  withTag,
  withUntagged,
} from '@podmin/util-oci';
import type { ImageIndex, QualifiedReference } from '@podmin/util-oci';
import type { ImageBucket, IndexMergeOptions } from './bucket-layout';
import { ensureLayoutMarker, mergeIndex, uploadImageContent } from './bucket-layout';
import type { ImageDeps } from './image-deps';
import { plainDescriptor, readImageGraph } from './image-deps';
import { ensureImage } from './source';

/** Options of {@link pushImage}. */
export interface PushOptions extends IndexMergeOptions {
  /** Image to publish: a local build (`hello:v1`) or a source registry reference. */
  source: string;
  /**
   * Cluster destination (`hello:v2`, `registry.podmin.internal/apps/x:y`), resolved exactly as
   * `--image` resolves it (no tag means `:latest`); derived from the source when absent.
   */
  destination?: string;
  /** Pull the source again even when it is in the store. */
  pull?: boolean;
  /** Parallel uploads (default 4). */
  concurrency?: number;
}

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
  // The destination is what `--image` resolves it to (DESIGN §6.16): without a tag or digest it
  // is :latest, never the source's tag.
  if (destination.tag === undefined && destination.digest === undefined) {
    destination = { ...destination, tag: DEFAULT_TAG };
  }
  const name = formatReference(destination);
  const prefix = repositoryPrefix(destination.repository);
  const graph = await readImageGraph(store, image.repository, image.descriptor);
  const top = plainDescriptor(image.descriptor);

  const label = `Pushing ${name}`;
  const { uploaded, skipped } = await uploadImageContent(
    { store, repository: image.repository, reporter },
    bucket,
    graph,
    {
      prefix,
      label,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    },
  );
  await ensureLayoutMarker(bucket, prefix);

  const apply = (current: ImageIndex): ImageIndex =>
    destination.tag !== undefined
      ? withTag(current, { tag: destination.tag, image: top, nested: graph.nested })
      : withUntagged(current, [top, ...graph.nested]);
  await mergeIndex(bucket, `${prefix}${LAYOUT_INDEX_FILE}`, apply, options);
  reporter.info(
    `Pushed ${name} (${image.descriptor.digest}; ${uploaded} uploaded, ${skipped} already in the bucket)`,
  );
  return destination;
}
