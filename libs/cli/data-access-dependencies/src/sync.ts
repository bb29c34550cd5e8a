import { readFile } from 'node:fs/promises';
import pLimit from 'p-limit';
import { PodminError, hasCode } from '@podmin/util-errors';
import type { ObjectStore } from '@podmin/data-access-object-store';
import {
  DEFAULT_RETENTION,
  DEPENDENCY_MANIFEST_KEY,
  JOOL_DEPENDENCY,
  MAX_DEPENDENCY_MANIFEST_BYTES,
  OTEL_LOGS_DEPENDENCY_NAMES,
  buildDependencyManifest,
  emptyDependencyManifest,
  parseDependencyManifest,
  planRetention,
  planSync,
  serializeDependencyManifest,
  type Arch,
  type DependencyFileEntry,
  type DependencyImageEntry,
  type DependencyManifest,
  type DesiredFile,
  type DesiredImage,
  type JoolArchiveExpectation,
  type Nat64Kernel,
  type RetentionObject,
  type RetentionPolicy,
} from '@podmin/util-dependencies';
import type { CachedFile, ProgressSink } from './download-cache';
import { verifyJoolArchive } from './jool-archive';

/**
 * The image side of a sync, provided by the image libraries: resolves an upstream image into
 * the local image cache and publishes it to the bucket's `mirror/` layout.
 */
export interface ImageMirror {
  /** Digest and unique compressed size of the upstream image (pulling it into the local cache). */
  resolve(image: DesiredImage): Promise<{ digest: string; size: number }>;
  /**
   * Makes `entry.path` serve `entry.digest` with every nested manifest in its top-level index:
   * uploads what is missing, or repairs a legacy index from the local cache without uploading
   * blobs again. Reports what it did.
   */
  ensurePublished(
    store: ObjectStore,
    entry: DependencyImageEntry,
  ): Promise<'present' | 'repaired' | 'uploaded'>;
}

/** Output port of a sync (the CLI's Reporter fits). */
export interface SyncReporter extends ProgressSink {
  warn(message: string): void;
}

/** Options of {@link syncDependencies}. */
export interface SyncDependenciesOptions {
  /** Resolves the desired set from upstream. */
  resolver: {
    resolveFiles(archs: readonly Arch[]): Promise<DesiredFile[]>;
    resolveImages(): Promise<DesiredImage[]>;
    resolveJool?(kernels: readonly Nat64Kernel[]): Promise<DesiredFile[]>;
    resolveOtelLogs?(archs: readonly Arch[]): Promise<DesiredFile[]>;
  };
  /**
   * `setup --otel-logs`: true adds the log export packages (libpq5 and Fluent Bit) to the set,
   * false leaves them out; undefined keeps whatever entries the manifest already records for
   * them (a sync that does not know the cluster's log export).
   */
  otelLogs?: boolean;
  /**
   * The kernels NAT64 instances boot: their Jool module archives join the set (checked against
   * the kernel before upload). Empty when there is no NAT64; undefined keeps whatever Jool
   * entries the manifest already records (a sync that does not know the infrastructure).
   */
  nat64Kernels?: readonly Nat64Kernel[];
  /** The local download cache. */
  cache: { ensureAll(files: readonly DesiredFile[]): Promise<CachedFile[]> };
  images: ImageMirror;
  reporter: SyncReporter;
  /** Injected clock for retention (default: now). */
  clock?: () => Date;
  retention?: RetentionPolicy;
  /** Concurrent uploads (2). */
  uploadConcurrency?: number;
}

/** What a sync did. */
export interface SyncResult {
  /** The complete manifest now published. */
  manifest: DependencyManifest;
  /** Whether the manifest was written (false when it already matched). */
  written: boolean;
  /** Object keys of files uploaded. */
  uploaded: string[];
  /** Image names whose mirror was uploaded or repaired. */
  imagesChanged: string[];
  /** Object keys deleted by retention. */
  deleted: string[];
}

/** The published manifest and its ETag (undefined when none exists). */
export interface PublishedManifest {
  manifest: DependencyManifest;
  etag: string | undefined;
  /** Exact bytes read, to detect an unchanged manifest. */
  body: string | undefined;
}

/** Reads `dependencies/manifest.json` with its ETag; an absent manifest reads as empty. */
export async function readDependencyManifest(store: ObjectStore): Promise<PublishedManifest> {
  try {
    const object = await store.get(DEPENDENCY_MANIFEST_KEY, {
      maxBytes: MAX_DEPENDENCY_MANIFEST_BYTES,
    });
    return {
      manifest: parseDependencyManifest(object.body),
      etag: object.etag,
      body: object.body.toString('utf8'),
    };
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) {
      return { manifest: emptyDependencyManifest(), etag: undefined, body: undefined };
    }
    throw err;
  }
}

/**
 * Publishes the complete dependency set for `desiredArchs`: reads the manifest and its ETag,
 * resolves the desired files and images, downloads only pending files that are missing or
 * corrupt in the cache, uploads only pending files and images, then writes the manifest last
 * by compare-and-swap (a competing writer fails the sync with PRECONDITION_FAILED). Retention
 * runs afterwards and only warns on failure.
 */
export async function syncDependencies(
  store: ObjectStore,
  desiredArchs: readonly Arch[],
  options: SyncDependenciesOptions,
): Promise<SyncResult> {
  const archs = [...new Set(desiredArchs)].sort();
  if (archs.length === 0) {
    throw new PodminError('INVALID_ARGUMENT', 'publishing dependencies: no architecture requested');
  }
  const published = await readDependencyManifest(store);
  const [files, images, joolFiles, otelLogsFiles] = await Promise.all([
    options.resolver.resolveFiles(archs),
    options.resolver.resolveImages(),
    resolveJool(options),
    resolveOtelLogs(options, archs),
  ]);
  const plan = planSync(published.manifest, [...files, ...joolFiles, ...otelLogsFiles], images);

  const fileEntries: Array<{ name: string; arch: Arch; entry: DependencyFileEntry }> =
    plan.published.map(({ file, entry }) => ({ name: file.name, arch: file.arch, entry }));
  if (options.nat64Kernels === undefined) {
    for (const [arch, entry] of Object.entries(
      published.manifest.dependencies[JOOL_DEPENDENCY] ?? {},
    )) {
      fileEntries.push({ name: JOOL_DEPENDENCY, arch: arch as Arch, entry });
    }
  }
  if (options.otelLogs === undefined) {
    for (const name of OTEL_LOGS_DEPENDENCY_NAMES) {
      for (const [arch, entry] of Object.entries(published.manifest.dependencies[name] ?? {})) {
        fileEntries.push({ name, arch: arch as Arch, entry });
      }
    }
  }
  const uploaded: string[] = [];
  if (plan.pendingFiles.length > 0) {
    options.reporter.info(`publishing ${plan.pendingFiles.length} dependency file(s)`);
    const cached = await options.cache.ensureAll(plan.pendingFiles);
    // Every Jool archive is checked against its NAT64 kernel before anything is uploaded.
    for (const c of cached) {
      if (c.file.name === JOOL_DEPENDENCY) {
        await verifyJoolArchive(c.localPath, joolExpectation(c.file, options), c.file.url);
      }
    }
    const limit = pLimit(options.uploadConcurrency ?? 2);
    const totalBytes = cached.reduce((sum, c) => sum + c.size, 0);
    let uploadedBytes = 0;
    options.reporter.progress('uploading dependencies', 0, totalBytes, 'bytes');
    await Promise.all(
      cached.map((c) =>
        limit(async () => {
          await store.put(c.file.path, await readFile(c.localPath));
          uploaded.push(c.file.path);
          uploadedBytes += c.size;
          options.reporter.progress('uploading dependencies', uploadedBytes, totalBytes, 'bytes');
        }),
      ),
    );
    for (const c of cached) {
      const { name, arch, version, url, path, digest } = c.file;
      fileEntries.push({ name, arch, entry: { version, url, path, digest, size: c.size } });
    }
  }

  const imageEntries: Array<{ name: string; entry: DependencyImageEntry }> = [];
  const imagesChanged: string[] = [];
  for (const { image, entry } of plan.publishedImages) {
    const outcome = await options.images.ensurePublished(store, entry);
    if (outcome !== 'present') imagesChanged.push(image.name);
    imageEntries.push({ name: image.name, entry });
  }
  for (const image of plan.pendingImages) {
    const { digest, size } = await options.images.resolve(image);
    const entry: DependencyImageEntry = {
      version: image.version,
      source: image.source,
      path: image.path,
      digest,
      size,
    };
    const outcome = await options.images.ensurePublished(store, entry);
    if (outcome !== 'present') imagesChanged.push(image.name);
    imageEntries.push({ name: image.name, entry });
  }

  const manifest = buildDependencyManifest(fileEntries, imageEntries);
  const body = serializeDependencyManifest(manifest);
  let written = false;
  if (body !== published.body) {
    await writeManifest(store, body, published.etag);
    written = true;
  }
  const deleted = await applyRetention(store, manifest, options);
  return { manifest, written, uploaded: uploaded.sort(), imagesChanged, deleted };
}

async function resolveJool(options: SyncDependenciesOptions): Promise<DesiredFile[]> {
  const kernels = options.nat64Kernels;
  if (kernels === undefined || kernels.length === 0) return [];
  if (options.resolver.resolveJool === undefined) {
    throw new PodminError('INTERNAL', 'publishing dependencies: the resolver cannot resolve Jool');
  }
  return options.resolver.resolveJool(kernels);
}

async function resolveOtelLogs(
  options: SyncDependenciesOptions,
  archs: readonly Arch[],
): Promise<DesiredFile[]> {
  if (options.otelLogs !== true) return [];
  if (options.resolver.resolveOtelLogs === undefined) {
    throw new PodminError(
      'INTERNAL',
      'publishing dependencies: the resolver cannot resolve the log export packages',
    );
  }
  return options.resolver.resolveOtelLogs(archs);
}

/**
 * What a Jool file's archive must declare: the kernel setup read for its architecture, and the
 * Jool version its recorded `<jool>-<kernel ABI>` version starts with.
 */
function joolExpectation(
  file: DesiredFile,
  options: SyncDependenciesOptions,
): JoolArchiveExpectation {
  const kernel = options.nat64Kernels?.find((k) => k.arch === file.arch);
  if (kernel === undefined || !file.version.endsWith(`-${kernel.kernelAbi}`)) {
    throw new PodminError(
      'INTERNAL',
      `Jool ${file.version} (${file.arch}) matches no NAT64 kernel`,
    );
  }
  return {
    joolVersion: file.version.slice(0, -kernel.kernelAbi.length - 1),
    kernelRelease: kernel.kernelRelease,
    arch: file.arch,
  };
}

async function writeManifest(
  store: ObjectStore,
  body: string,
  etag: string | undefined,
): Promise<void> {
  try {
    if (etag === undefined) await store.putIfAbsent(DEPENDENCY_MANIFEST_KEY, body);
    else await store.putIfMatch(DEPENDENCY_MANIFEST_KEY, body, etag);
  } catch (err) {
    if (hasCode(err, 'PRECONDITION_FAILED')) {
      throw new PodminError(
        'PRECONDITION_FAILED',
        `publishing ${DEPENDENCY_MANIFEST_KEY}: another writer changed it after this run read it`,
        {
          cause: err,
          hint: 'Another setup is publishing dependencies; run setup again once it has finished.',
        },
      );
    }
    throw err;
  }
}

async function applyRetention(
  store: ObjectStore,
  manifest: DependencyManifest,
  options: SyncDependenciesOptions,
): Promise<string[]> {
  const objects: RetentionObject[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await store.list('dependencies/', token);
      objects.push(...page.objects.map((o) => ({ key: o.key, lastModified: o.lastModified })));
      token = page.nextToken;
    } while (token !== undefined);
  } catch (err) {
    options.reporter.warn(
      `dependency cleanup skipped: listing dependencies/: ${(err as Error).message}`,
    );
    return [];
  }
  const protectedKeys = new Set(
    Object.values(manifest.dependencies).flatMap((byArch) =>
      Object.values(byArch).map((entry) => entry.path),
    ),
  );
  const now = (options.clock ?? (() => new Date()))();
  const plan = planRetention(objects, now, protectedKeys, options.retention ?? DEFAULT_RETENTION);
  const deleted: string[] = [];
  for (const key of plan.deletions) {
    try {
      await store.delete(key);
      deleted.push(key);
    } catch (err) {
      options.reporter.warn(`dependency cleanup: deleting ${key}: ${(err as Error).message}`);
    }
  }
  return deleted;
}
