import type { Arch } from './catalog';
import type { DependencyFileEntry, DependencyImageEntry, DependencyManifest } from './manifest';

/** A file the cluster should have, as resolved from upstream (size may still be unknown). */
export interface DesiredFile {
  name: string;
  arch: Arch;
  version: string;
  url: string;
  path: string;
  digest: string;
  /** Exact size when the publisher lists it; otherwise learnt from the download. */
  size?: number;
}

/** An image the cluster should have, before its digest is known. */
export interface DesiredImage {
  name: string;
  version: string;
  source: string;
  path: string;
}

/** The pending work of a sync: what the published manifest does not already record. */
export interface SyncPlan {
  /** Desired files already published, with their recorded entries. */
  published: Array<{ file: DesiredFile; entry: DependencyFileEntry }>;
  /** Desired files to download (or reuse from the cache) and upload. */
  pendingFiles: DesiredFile[];
  /** Desired images already recorded at the same version and source. */
  publishedImages: Array<{ image: DesiredImage; entry: DependencyImageEntry }>;
  /** Desired images to resolve and publish. */
  pendingImages: DesiredImage[];
}

/**
 * Compares the desired set with the published manifest. A file matches when version, URL,
 * path and digest are all equal (its recorded size is reused); an image when version, source
 * and path are equal. Everything else is pending.
 */
export function planSync(
  published: DependencyManifest,
  files: readonly DesiredFile[],
  images: readonly DesiredImage[],
): SyncPlan {
  const plan: SyncPlan = {
    published: [],
    pendingFiles: [],
    publishedImages: [],
    pendingImages: [],
  };
  for (const file of files) {
    const entry = published.dependencies[file.name]?.[file.arch];
    if (
      entry !== undefined &&
      entry.version === file.version &&
      entry.url === file.url &&
      entry.path === file.path &&
      entry.digest === file.digest &&
      (file.size === undefined || file.size === entry.size)
    ) {
      plan.published.push({ file, entry });
    } else {
      plan.pendingFiles.push(file);
    }
  }
  for (const image of images) {
    const entry = published.images[image.name];
    if (
      entry !== undefined &&
      entry.version === image.version &&
      entry.source === image.source &&
      entry.path === image.path
    ) {
      plan.publishedImages.push({ image, entry });
    } else {
      plan.pendingImages.push(image);
    }
  }
  return plan;
}

/** Builds the complete manifest from file and image entries (only these, nothing carried over). */
export function buildDependencyManifest(
  files: ReadonlyArray<{ name: string; arch: Arch; entry: DependencyFileEntry }>,
  images: ReadonlyArray<{ name: string; entry: DependencyImageEntry }>,
): DependencyManifest {
  const manifest: DependencyManifest = { version: 1, dependencies: {}, images: {} };
  for (const { name, arch, entry } of files) {
    (manifest.dependencies[name] ??= {})[arch] = entry;
  }
  for (const { name, entry } of images) manifest.images[name] = entry;
  return manifest;
}
