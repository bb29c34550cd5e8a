import { PodminError } from '@podmin/util-errors';
import {
  CLUSTER_REGISTRY,
  clusterDestination,
  formatReference,
  parseClusterReference,
  parseReference,
  parseSourceReference,
} from '@podmin/util-oci';
import type { Descriptor, QualifiedReference } from '@podmin/util-oci';
import type { ImageDeps } from './image-deps';
import { pullImage } from './pull';

/** An image available in the local store. */
export interface StoredImage {
  /** Its name in the store. */
  reference: QualifiedReference;
  /** Store repository (`<registry>/<repository>`). */
  repository: string;
  /** Top-level descriptor. */
  descriptor: Descriptor;
  /** True for a locally built image under the cluster name (it has no source registry). */
  local: boolean;
}

/**
 * The store name `podmin build -t TAG` writes: shorthand (`hello:v1`) and cluster references
 * resolve beneath `registry.podmin.internal/apps/`; a reference with another registry is kept
 * as written (Docker defaults applied). No tag means `latest`; digests are refused.
 */
export function buildTagReference(tag: string): QualifiedReference {
  const parsed = parseReference(tag);
  if (parsed.digest !== undefined) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `tagging ${tag}: a build tag cannot contain a digest`,
    );
  }
  const ref =
    parsed.registry === undefined || parsed.registry === CLUSTER_REGISTRY
      ? clusterDestination(tag, tag)
      : parseSourceReference(tag);
  return { ...ref, tag: ref.tag ?? 'latest' };
}

/**
 * Finds `source` in the store, pulling it when it is absent or `pull` is set. A name without
 * a registry first means a locally built image (`hello:v1` →
 * `registry.podmin.internal/apps/hello:v1`), otherwise a Docker Hub image; a cluster-registry
 * name must have been built locally.
 */
export async function ensureImage(
  deps: ImageDeps,
  source: string,
  options: { pull?: boolean } = {},
): Promise<StoredImage> {
  const { store } = deps;
  const parsed = parseReference(source);
  if (parsed.registry === undefined || parsed.registry === CLUSTER_REGISTRY) {
    const cluster = parseClusterReference(source);
    const local = {
      ...cluster,
      tag: cluster.digest === undefined ? (cluster.tag ?? 'latest') : cluster.tag,
    };
    const found =
      options.pull === true && parsed.registry === undefined
        ? undefined
        : await store.resolve(local);
    if (found !== undefined) {
      return {
        reference: local,
        repository: store.repositoryOf(local),
        descriptor: found,
        local: true,
      };
    }
    if (parsed.registry === CLUSTER_REGISTRY) {
      throw new PodminError(
        'NOT_FOUND',
        `finding ${formatReference(local)}: no such image in the local store (${store.root})`,
        { hint: `build it first: podmin build -t ${source} .` },
      );
    }
  }
  const reference = parseSourceReference(source);
  if (options.pull !== true) {
    const found = await store.resolve(reference);
    if (found !== undefined) {
      return {
        reference,
        repository: store.repositoryOf(reference),
        descriptor: found,
        local: false,
      };
    }
  }
  const pulled = await pullImage(deps, reference);
  return { reference, repository: pulled.repository, descriptor: pulled.descriptor, local: false };
}
