import path from 'node:path';
import type { Reporter } from '@podmin/cli-util-io';
import {
  DependencyResolver,
  DownloadCache,
  buildAgentFromSource,
  type CachedFile,
  type FetchFunction,
  type ImageMirror,
  type ReleaseEndpoints,
} from '@podmin/cli-data-access-dependencies';
import { ARCHITECTURES, isArch, type Arch } from '@podmin/util-dependencies';
import { ValidationError } from '@podmin/util-errors';

/** Inputs of `podmin fetch`. */
export interface FetchDependenciesOptions {
  /** Architectures to fetch (default: both). */
  archs: readonly string[];
  /** The Podmin cache directory; files land in `<cache>/downloads`. */
  cacheDir: string;
  /** The CLI version the published agent must match. */
  cliVersion: string;
  /** A podmin checkout to build the agent from instead of the published one. */
  agentSource?: string;
  /** Concurrent downloads (4). */
  concurrency?: number;
  /** Upstream endpoints (tests). */
  endpoints?: Partial<ReleaseEndpoints>;
  fetch?: FetchFunction;
  githubToken?: string;
  /**
   * Resolves each dependency image into the local image store (pulling only when absent);
   * without it, images are neither resolved nor fetched.
   */
  images?: Pick<ImageMirror, 'resolve'>;
}

/** Parses `--arch amd64,arm64` (repeatable, comma-separated); INVALID_ARGUMENT on others. */
export function parseArchitectures(values: readonly string[]): Arch[] {
  const parts = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (parts.length === 0) return [...ARCHITECTURES];
  const bad = parts.filter((p) => !isArch(p));
  if (bad.length > 0) {
    throw new ValidationError(
      'parsing --arch',
      bad.map((b) => ({
        field: '--arch',
        message: `${JSON.stringify(b)} is not one of ${ARCHITECTURES.join(', ')}`,
      })),
      { code: 'INVALID_ARGUMENT' },
    );
  }
  return [...new Set(parts as Arch[])].sort();
}

/** One dependency file `podmin fetch` verified in the download cache. */
export interface FetchedFile {
  name: string;
  arch: Arch;
  version: string;
  /** Absolute path of the verified file. */
  path: string;
  /** `sha256:<hex>` (or the publisher's algorithm) it was verified against. */
  digest: string;
  size: number;
}

/** One dependency image `podmin fetch` resolved into the local image store. */
export interface FetchedImage {
  name: string;
  version: string;
  /** Where it is pulled from, e.g. `registry.k8s.io/pause:3.10`. */
  source: string;
  digest: string;
}

/** What `podmin fetch` put in the cache: files, then images (empty without `images`). */
export interface FetchResult {
  files: FetchedFile[];
  images: FetchedImage[];
}

/**
 * `podmin fetch`: resolves the dependency set for the architectures and fills the verified
 * download cache, and the local image store with the dependency images when `images` is
 * given, without reading or writing cluster object storage. Progress and status go to the
 * reporter (stderr); the files and images are returned, not printed.
 */
export async function fetchDependencySet(
  options: FetchDependenciesOptions,
  reporter: Pick<Reporter, 'info' | 'progress'>,
): Promise<FetchResult> {
  const archs = parseArchitectures(options.archs);
  let agent;
  if (options.agentSource !== undefined) {
    reporter.info(`building podmin-agent from ${options.agentSource}`);
    agent = await buildAgentFromSource(options.agentSource, options.cliVersion);
  }
  const resolver = new DependencyResolver({
    cliVersion: options.cliVersion,
    ...(options.endpoints !== undefined ? { endpoints: options.endpoints } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    ...(options.githubToken !== undefined ? { githubToken: options.githubToken } : {}),
    ...(agent !== undefined ? { agent } : {}),
  });
  reporter.info(`resolving dependencies for ${archs.join(', ')}`);
  const files = await resolver.resolveFiles(archs);
  const cache = new DownloadCache({
    dir: path.join(options.cacheDir, 'downloads'),
    reporter,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  });
  const cached: CachedFile[] = await cache.ensureAll(files);
  const images: FetchedImage[] = [];
  if (options.images !== undefined) {
    for (const image of await resolver.resolveImages()) {
      const { digest } = await options.images.resolve(image);
      images.push({ name: image.name, version: image.version, source: image.source, digest });
    }
  }
  return {
    files: cached.map((c) => ({
      name: c.file.name,
      arch: c.file.arch,
      version: c.file.version,
      path: c.localPath,
      digest: c.file.digest,
      size: c.size,
    })),
    images,
  };
}

/** The lines `podmin fetch` prints: `name arch version path` per file, `name image version source@digest` per image. */
export function fetchResultLines(result: FetchResult): string[] {
  return [
    ...result.files.map((f) => `${f.name}\t${f.arch}\t${f.version}\t${f.path}`),
    ...result.images.map((i) => `${i.name}\timage\t${i.version}\t${i.source}@${i.digest}`),
  ];
}

/**
 * {@link fetchDependencySet}, printing one result line per file and per image
 * ({@link fetchResultLines}) through the reporter.
 */
export async function fetchDependencies(
  options: FetchDependenciesOptions,
  reporter: Reporter,
): Promise<FetchResult> {
  const result = await fetchDependencySet(options, reporter);
  for (const line of fetchResultLines(result)) reporter.result(line);
  return result;
}
