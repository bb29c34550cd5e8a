import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { PodminError } from '@podmin/util-errors';
import {
  DOCKER_LAYER_GZIP_MEDIA_TYPE,
  MAX_IMAGE_CONFIG_BYTES,
  MAX_MANIFEST_BYTES,
  OCI_CONFIG_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_LAYER_GZIP_MEDIA_TYPE,
  OCI_LAYER_TAR_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  canonicalJsonBytes,
  formatPlatform,
  formatReference,
  parseImageConfig,
  parseManifest,
  parsePlatform,
} from '@podmin/util-oci';
import type {
  ContainerConfig,
  Descriptor,
  HistoryEntry,
  ImageConfig,
  Platform,
  QualifiedReference,
} from '@podmin/util-oci';
import { ContainerfileError } from '../containerfile/errors';
import { evaluateFrom } from '../containerfile/evaluate-from';
import { evaluateStage } from '../containerfile/evaluate-stage';
import type { BuildArguments } from '../containerfile/build-arguments';
import { parseContainerfile } from '../containerfile/parser';
import type { ImageDeps } from '../image-deps';
import { buildTagReference, ensureImage } from '../source';
import type { StoredImage } from '../source';
import { collectCopy } from './context';
import type { KnownPaths } from './context';
import { writeLayer } from './layer';

/** Options of {@link buildImage}. */
export interface BuildOptions {
  /** Build context directory. */
  context: string;
  /** Containerfile path (default `<context>/Containerfile`, else `<context>/Dockerfile`). */
  file?: string;
  /** Tags to write (`hello:v1` → `registry.podmin.internal/apps/hello:v1`); at least one. */
  tags: readonly string[];
  /** Platforms (`os/arch[/variant]`, comma-separated lists allowed); the host's by default. */
  platforms?: readonly string[];
  /** Pull base images again even when stored. */
  pull?: boolean;
  /** `NAME=value` build arguments. */
  buildArgs?: readonly string[];
  /** The machine's platform (BUILDPLATFORM and the default target); from `process.arch` by default. */
  hostPlatform?: Platform;
}

/** What a build wrote. */
export interface BuildResult {
  /** The store references now pointing at the image, one per tag. */
  references: QualifiedReference[];
  /** The image index. */
  index: Descriptor;
  /** The per-platform manifests inside the index. */
  manifests: Descriptor[];
}

/** The platform of this machine (`linux/amd64` or `linux/arm64`). */
export function hostPlatform(arch: string = process.arch): Platform {
  const architecture = arch === 'x64' ? 'amd64' : arch === 'arm64' ? 'arm64' : undefined;
  if (architecture === undefined) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `choosing the default platform: ${arch} is not amd64 or arm64`,
      {
        hint: 'pass --platform linux/amd64 or --platform linux/arm64',
      },
    );
  }
  return { os: 'linux', architecture };
}

/**
 * Builds an image from a Containerfile without running anything: each COPY/ADD becomes one
 * deterministic layer, the other instructions become image config, and the result is an OCI
 * image index with one manifest per platform (even a single one), written to the local store
 * under every tag.
 */
export async function buildImage(deps: ImageDeps, options: BuildOptions): Promise<BuildResult> {
  const { store, reporter } = deps;
  if (options.tags.length === 0) {
    throw new PodminError('INVALID_ARGUMENT', 'building an image: at least one --tag is required', {
      hint: 'podmin build -t hello:v1 .',
    });
  }
  const context = path.resolve(options.context);
  if (!(await stat(context).catch(() => undefined))?.isDirectory()) {
    throw new PodminError('INVALID_ARGUMENT', `building from ${options.context}: not a directory`);
  }
  const file = options.file ?? defaultContainerfile(context);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PodminError('INVALID_ARGUMENT', `reading ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const parsed = parseContainerfile(text, path.basename(file));
  const host = options.hostPlatform ?? hostPlatform();
  const platforms = parsePlatforms(options.platforms, host);
  const buildArgs = parseBuildArgs(options.buildArgs ?? []);
  const references = options.tags.map(buildTagReference);
  const primary = store.repositoryOf(references[0] as QualifiedReference);
  const bases = new Map<string, Promise<StoredImage>>();
  const declared = new Set<string>();
  const manifests: Descriptor[] = [];
  const blobs: Descriptor[] = [];
  await mkdir(store.tempDir(), { recursive: true });

  for (const target of platforms) {
    const args: BuildArguments = { target, build: host, values: buildArgs };
    const from = evaluateFrom(parsed, args);
    const label = formatPlatform(target);
    reporter.info(`Building ${label} from ${from.image}`);
    let base: BaseImage = { config: {}, diffIds: [], layers: [], history: [], known: new Map() };
    if (from.image !== 'scratch') {
      const key = from.image;
      if (!bases.has(key))
        bases.set(key, ensureImage(deps, from.image, { pull: options.pull === true }));
      const stored = await (bases.get(key) as Promise<StoredImage>).catch((err: unknown) => {
        throw new ContainerfileError(
          parsed.file,
          from.line,
          `FROM ${from.image}: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      });
      base = await loadBase(deps, stored, from.platform ?? target, primary, parsed.file, from.line);
    }
    const stage = evaluateStage(parsed, from, args, { config: base.config }, declared);
    const layers = [...base.layers];
    const diffIds = [...base.diffIds];
    for (const step of stage.copies) {
      const entries = await collectCopy(step, context, base.known, parsed.file);
      const temp = path.join(
        store.tempDir(),
        `layer-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}`,
      );
      try {
        const written = await writeLayer(entries, temp);
        await store.adoptFile(primary, temp, written.digest);
        layers.push({
          mediaType: OCI_LAYER_GZIP_MEDIA_TYPE,
          digest: written.digest,
          size: written.size,
        });
        diffIds.push(written.diffId);
        reporter.info(
          `  ${label} line ${step.line}: ${step.keyword} → ${entries.length} entries, ${written.digest}`,
        );
      } finally {
        await rm(temp, { force: true });
      }
    }
    const history: HistoryEntry[] = [...base.history, ...stage.history];
    const config: ImageConfig = {
      architecture: target.architecture,
      os: target.os,
      ...(target.variant !== undefined ? { variant: target.variant } : {}),
      ...(stage.author !== undefined ? { author: stage.author } : {}),
      config: cleanConfig(stage.config),
      rootfs: { type: 'layers', diff_ids: diffIds },
      history,
    };
    const configBlob = await store.writeBlob(primary, canonicalJsonBytes(config));
    const configDescriptor: Descriptor = { mediaType: OCI_CONFIG_MEDIA_TYPE, ...configBlob };
    const manifestBytes = canonicalJsonBytes({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      config: configDescriptor,
      layers,
    });
    const manifestBlob = await store.writeBlob(primary, manifestBytes);
    manifests.push({ mediaType: OCI_MANIFEST_MEDIA_TYPE, ...manifestBlob, platform: target });
    blobs.push(
      configDescriptor,
      { mediaType: OCI_MANIFEST_MEDIA_TYPE, ...manifestBlob },
      ...layers,
    );
  }
  for (const name of buildArgs.keys()) {
    if (!declared.has(name)) reporter.warn(`build argument ${name} is not declared by any ARG`);
  }
  const indexBlob = await store.writeBlob(
    primary,
    canonicalJsonBytes({ schemaVersion: 2, mediaType: OCI_INDEX_MEDIA_TYPE, manifests }),
  );
  const index: Descriptor = { mediaType: OCI_INDEX_MEDIA_TYPE, ...indexBlob };
  for (const reference of references) {
    const repository = store.repositoryOf(reference);
    if (repository !== primary) {
      for (const blob of [...blobs, index])
        await store.copyBlob(primary, repository, blob.digest, blob.size);
    }
    await store.tag(repository, {
      tag: reference.tag ?? 'latest',
      image: index,
      nested: manifests,
    });
    reporter.info(`Tagged ${formatReference(reference)} (${index.digest})`);
  }
  return { references, index, manifests };
}

interface BaseImage {
  config: ContainerConfig;
  diffIds: string[];
  layers: Descriptor[];
  history: HistoryEntry[];
  known: KnownPaths;
}

async function loadBase(
  deps: ImageDeps,
  image: StoredImage,
  platform: Platform,
  primary: string,
  file: string,
  line: number,
): Promise<BaseImage> {
  const { store } = deps;
  const fail = (why: string): never => {
    throw new ContainerfileError(file, line, `FROM ${formatReference(image.reference)}: ${why}`);
  };
  let manifestDescriptor = image.descriptor;
  const top = parseManifest(
    await store.readBlob(image.repository, image.descriptor.digest, {
      maxBytes: MAX_MANIFEST_BYTES,
    }),
  );
  if (top.kind === 'index') {
    const match = top.index.manifests.find(
      (d) => d.platform !== undefined && platformMatches(d.platform, platform),
    );
    if (match === undefined) {
      return fail(
        `no manifest for ${formatPlatform(platform)} (it has ${top.index.manifests.map((d) => (d.platform ? formatPlatform(d.platform) : '?')).join(', ')})`,
      );
    }
    manifestDescriptor = match;
  }
  const parsed = parseManifest(
    await store.readBlob(image.repository, manifestDescriptor.digest, {
      maxBytes: MAX_MANIFEST_BYTES,
      size: manifestDescriptor.size,
    }),
  );
  if (parsed.kind !== 'manifest') return fail('nested indexes are not supported as a base');
  const manifest = parsed.manifest;
  const config = parseImageConfig(
    await store.readBlob(image.repository, manifest.config.digest, {
      maxBytes: MAX_IMAGE_CONFIG_BYTES,
      size: manifest.config.size,
    }),
  );
  if (
    top.kind === 'manifest' &&
    !platformMatches(
      {
        os: config.os,
        architecture: config.architecture,
        ...(config.variant ? { variant: config.variant } : {}),
      },
      platform,
    )
  ) {
    fail(`it is ${config.os}/${config.architecture}, not ${formatPlatform(platform)}`);
  }
  const known: KnownPaths = new Map();
  const layers: Descriptor[] = [];
  for (const layer of manifest.layers) {
    await store.copyBlob(image.repository, primary, layer.digest, layer.size);
    const mediaType =
      layer.mediaType === DOCKER_LAYER_GZIP_MEDIA_TYPE
        ? OCI_LAYER_GZIP_MEDIA_TYPE
        : layer.mediaType;
    layers.push({ mediaType, digest: layer.digest, size: layer.size });
    if (mediaType === OCI_LAYER_GZIP_MEDIA_TYPE || mediaType === OCI_LAYER_TAR_MEDIA_TYPE) {
      await listLayer(
        store.openBlob(primary, layer.digest, layer.size),
        mediaType === OCI_LAYER_GZIP_MEDIA_TYPE,
        known,
      );
    }
  }
  return {
    config: config.config ?? {},
    diffIds: config.rootfs.diff_ids,
    layers,
    history: config.history ?? [],
    known,
  };
}

async function listLayer(
  source: NodeJS.ReadableStream,
  gzip: boolean,
  known: KnownPaths,
): Promise<void> {
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    const name = header.name.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    if (name !== '' && !path.posix.basename(name).startsWith('.wh.')) {
      known.set(name, header.type === 'directory' ? 'directory' : 'other');
    }
    stream.on('end', () => next());
    stream.resume();
  });
  await (gzip ? pipeline(source, createGunzip(), tar) : pipeline(source, tar));
}

/** True when an index entry's platform satisfies the wanted one (arm64 treats `v8` as no variant). */
export function platformMatches(have: Platform, want: Platform): boolean {
  const variant = (p: Platform): string =>
    p.architecture === 'arm64' && (p.variant === undefined || p.variant === 'v8')
      ? ''
      : (p.variant ?? '');
  return (
    have.os === want.os &&
    have.architecture === want.architecture &&
    (want.variant === undefined || variant(have) === variant(want))
  );
}

function parsePlatforms(values: readonly string[] | undefined, host: Platform): Platform[] {
  const list = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (list.length === 0) return [host];
  const seen = new Set<string>();
  const platforms: Platform[] = [];
  for (const value of list) {
    const platform = parsePlatform(value);
    if (!seen.has(formatPlatform(platform))) {
      seen.add(formatPlatform(platform));
      platforms.push(platform);
    }
  }
  return platforms;
}

function parseBuildArgs(values: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `--build-arg ${JSON.stringify(value)}: use NAME=value`,
      );
    }
    map.set(value.slice(0, eq), value.slice(eq + 1));
  }
  return map;
}

function defaultContainerfile(context: string): string {
  const containerfile = path.join(context, 'Containerfile');
  return existsSync(containerfile) ? containerfile : path.join(context, 'Dockerfile');
}

function cleanConfig(config: ContainerConfig): ContainerConfig {
  const out: ContainerConfig = {};
  for (const [key, value] of Object.entries(config) as Array<[keyof ContainerConfig, unknown]>) {
    const emptyMap =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.keys(value).length === 0;
    if (value !== undefined && !emptyMap) {
      (out as Record<string, unknown>)[key] = value;
    }
  }
  return out;
}
