import type { LocalImageStore } from '@podmin/cli-data-access-image-store';
import type { Reporter } from '@podmin/cli-util-io';
import { PodminError } from '@podmin/util-errors';
import {
  MAX_MANIFEST_BYTES,
  isImageManifestMediaType,
  isIndexMediaType,
  parseManifest,
} from '@podmin/util-oci';
import type { Descriptor } from '@podmin/util-oci';
import type { RegistryClient } from './registry/registry-client';

/** The part of the CLI reporter image commands write to (stderr only). */
export type ImageReporter = Pick<Reporter, 'info' | 'warn' | 'progress'>;

/** What build, pull and push work with: the local store, a registry client, the reporter. */
export interface ImageDeps {
  /** The local OCI store in the cache. */
  store: LocalImageStore;
  /** Client for source registries (pulls). */
  registry: RegistryClient;
  /** Progress and status on stderr. */
  reporter: ImageReporter;
}

/** Every part of a stored image, in upload order. */
export interface ImageGraph {
  /** The top-level descriptor (index or manifest). */
  top: Descriptor;
  /** Descriptors of the manifests listed by the top index (with platforms); empty for a single manifest. */
  nested: Descriptor[];
  /** Manifest documents (top included) with their bytes, children before parents. */
  manifests: Array<{ descriptor: Descriptor; bytes: Buffer }>;
  /** Config and layer blobs, deduplicated. */
  blobs: Descriptor[];
}

/**
 * Reads an image's manifests from the store (each verified against its digest) and lists
 * every blob it references. Nested indexes are followed.
 */
export async function readImageGraph(
  store: LocalImageStore,
  repository: string,
  top: Descriptor,
): Promise<ImageGraph> {
  const manifests: ImageGraph['manifests'] = [];
  const blobs = new Map<string, Descriptor>();
  let nested: Descriptor[] = [];
  const visit = async (descriptor: Descriptor, depth: number): Promise<void> => {
    if (depth > 4) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `reading image ${top.digest}: indexes nested too deeply`,
      );
    }
    const bytes = await store.readBlob(repository, descriptor.digest, {
      maxBytes: MAX_MANIFEST_BYTES,
      size: descriptor.size,
    });
    const parsed = parseManifest(bytes, `manifest ${descriptor.digest}`);
    if (parsed.kind === 'index') {
      if (depth === 0) nested = parsed.index.manifests;
      for (const child of parsed.index.manifests) {
        if (isIndexMediaType(child.mediaType) || isImageManifestMediaType(child.mediaType)) {
          await visit(child, depth + 1);
        } else {
          blobs.set(child.digest, child);
        }
      }
    } else {
      for (const blob of [parsed.manifest.config, ...parsed.manifest.layers]) {
        blobs.set(blob.digest, blob);
      }
    }
    if (!manifests.some((m) => m.descriptor.digest === descriptor.digest)) {
      manifests.push({ descriptor, bytes });
    }
  };
  await visit(top, 0);
  return { top, nested, manifests, blobs: [...blobs.values()] };
}

/** A top-level descriptor without annotations (what a layout entry points at). */
export function plainDescriptor(d: Descriptor): Descriptor {
  return { mediaType: d.mediaType, digest: d.digest, size: d.size };
}
