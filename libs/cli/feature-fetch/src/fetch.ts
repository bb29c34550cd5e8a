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

/**
 * `podmin fetch`: resolves the dependency set for the architectures and fills the verified
 * download cache, and the local image store with the dependency images when `images` is
 * given, without reading or writing cluster object storage. Progress goes to stderr; one
 * result line per file (`name arch version path`) and per image
 * (`name image version source@digest`) to stdout.
 */
export async function fetchDependencies(
  options: FetchDependenciesOptions,
  reporter: Reporter,
): Promise<CachedFile[]> {
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
  const cached = await cache.ensureAll(files);
  for (const c of cached) {
    reporter.result(`${c.file.name}\t${c.file.arch}\t${c.file.version}\t${c.localPath}`);
  }
  if (options.images !== undefined) {
    for (const image of await resolver.resolveImages()) {
      const { digest } = await options.images.resolve(image);
      reporter.result(`${image.name}\timage\t${image.version}\t${image.source}@${digest}`);
    }
  }
  return cached;
}
