import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { isDigest, isJsonObject, parseStrictJson, type JsonValue } from '@podmin/util-oci';
import { ARCHITECTURES, isArch, type Arch } from './catalog';

/** Object key of the cluster's dependency manifest. */
export const DEPENDENCY_MANIFEST_KEY = 'dependencies/manifest.json';

/** Largest manifest podmin reads. */
export const MAX_DEPENDENCY_MANIFEST_BYTES = 1024 * 1024;

/** One mirrored file of one dependency and architecture. */
export interface DependencyFileEntry {
  version: string;
  /** Upstream URL it was downloaded from (a `file:` URL for an agent built from source). */
  url: string;
  /** Cluster object-storage key. */
  path: string;
  /** Publisher's digest, `sha512:` where offered, else the strongest offered. */
  digest: string;
  /** Exact size in bytes. */
  size: number;
}

/** One mirrored image. */
export interface DependencyImageEntry {
  version: string;
  /** Upstream reference, e.g. `registry.k8s.io/pause:3.10.2`. */
  source: string;
  /** Cluster OCI layout prefix, e.g. `mirror/registry.k8s.io/pause`. */
  path: string;
  /** Digest of the top-level index or manifest. */
  digest: string;
  /** Unique compressed OCI content bytes reachable from `digest`. */
  size: number;
}

/** `dependencies/manifest.json`: the complete dependency set published for the cluster. */
export interface DependencyManifest {
  version: 1;
  dependencies: Record<string, Partial<Record<Arch, DependencyFileEntry>>>;
  images: Record<string, DependencyImageEntry>;
}

/** A manifest with nothing in it. */
export function emptyDependencyManifest(): DependencyManifest {
  return { version: 1, dependencies: {}, images: {} };
}

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;
const FILE_PATH =
  /^dependencies\/([a-z0-9-]+)\/([a-z0-9-]+)-v([0-9A-Za-z.+-]+)-linux-(amd64|arm64)((?:\.[a-z0-9]+)*)$/;
const IMAGE_PATH = /^mirror\/[a-z0-9.-]+(?::[0-9]+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)+$/;

/** Parses a manifest strictly: exact fields, duplicate keys and unknown fields rejected. */
export function parseDependencyManifest(body: Buffer | string): DependencyManifest {
  const subject = `reading ${DEPENDENCY_MANIFEST_KEY}`;
  let value: JsonValue;
  try {
    value = parseStrictJson(body, DEPENDENCY_MANIFEST_KEY, {
      maxBytes: MAX_DEPENDENCY_MANIFEST_BYTES,
    });
  } catch (err) {
    throw new ValidationError(subject, [{ field: '(document)', message: (err as Error).message }], {
      code: 'INVALID_MANIFEST',
      fault: 'system',
      cause: err,
    });
  }
  const problems: FieldProblem[] = [];
  const manifest = readManifest(value, problems);
  if (problems.length > 0 || manifest === undefined) {
    throw new ValidationError(subject, problems, { code: 'INVALID_MANIFEST', fault: 'system' });
  }
  return manifest;
}

function readManifest(value: JsonValue, problems: FieldProblem[]): DependencyManifest | undefined {
  if (!isJsonObject(value)) {
    problems.push({ field: '(document)', message: 'must be a JSON object' });
    return undefined;
  }
  onlyFields(value, ['version', 'dependencies', 'images'], '', problems);
  if (value['version'] !== 1) problems.push({ field: 'version', message: 'must be 1' });
  const manifest = emptyDependencyManifest();
  const dependencies = value['dependencies'];
  if (!isJsonObject(dependencies)) {
    problems.push({ field: 'dependencies', message: 'must be an object' });
  } else {
    for (const [name, byArch] of Object.entries(dependencies)) {
      const field = `dependencies.${name}`;
      if (!NAME.test(name)) problems.push({ field, message: 'must be a lowercase name' });
      if (!isJsonObject(byArch)) {
        problems.push({ field, message: 'must be an object keyed by architecture' });
        continue;
      }
      const entries: Partial<Record<Arch, DependencyFileEntry>> = {};
      for (const [arch, entry] of Object.entries(byArch)) {
        if (!isArch(arch)) {
          problems.push({
            field: `${field}.${arch}`,
            message: `architecture must be one of ${ARCHITECTURES.join(', ')}`,
          });
          continue;
        }
        const file = readFileEntry(entry, name, arch, `${field}.${arch}`, problems);
        if (file !== undefined) entries[arch] = file;
      }
      manifest.dependencies[name] = entries;
    }
  }
  const images = value['images'];
  if (!isJsonObject(images)) {
    problems.push({ field: 'images', message: 'must be an object' });
  } else {
    for (const [name, entry] of Object.entries(images)) {
      const field = `images.${name}`;
      if (!NAME.test(name)) problems.push({ field, message: 'must be a lowercase name' });
      const image = readImageEntry(entry, field, problems);
      if (image !== undefined) manifest.images[name] = image;
    }
  }
  return manifest;
}

function readFileEntry(
  value: JsonValue | undefined,
  name: string,
  arch: Arch,
  field: string,
  problems: FieldProblem[],
): DependencyFileEntry | undefined {
  if (value === undefined || !isJsonObject(value)) {
    problems.push({ field, message: 'must be an object' });
    return undefined;
  }
  onlyFields(value, ['version', 'url', 'path', 'digest', 'size'], `${field}.`, problems);
  const version = stringField(value, 'version', field, problems, VERSION);
  const url = urlField(value, field, problems);
  const path = stringField(value, 'path', field, problems, FILE_PATH);
  const digest = digestField(value, field, problems);
  const size = sizeField(value, field, problems);
  if (path !== undefined && version !== undefined) {
    const parts = FILE_PATH.exec(path);
    if (parts?.[1] !== name || parts[2] !== name || parts[3] !== version || parts[4] !== arch) {
      problems.push({
        field: `${field}.path`,
        message: `must be dependencies/${name}/${name}-v${version}-linux-${arch}[.ext]`,
      });
    }
  }
  if (version === undefined || url === undefined || path === undefined) return undefined;
  if (digest === undefined || size === undefined) return undefined;
  return { version, url, path, digest, size };
}

function readImageEntry(
  value: JsonValue | undefined,
  field: string,
  problems: FieldProblem[],
): DependencyImageEntry | undefined {
  if (value === undefined || !isJsonObject(value)) {
    problems.push({ field, message: 'must be an object' });
    return undefined;
  }
  onlyFields(value, ['version', 'source', 'path', 'digest', 'size'], `${field}.`, problems);
  const version = stringField(value, 'version', field, problems, VERSION);
  const source = stringField(value, 'source', field, problems, /^[a-z0-9.-]+(?::[0-9]+)?\/\S+$/);
  const path = stringField(value, 'path', field, problems, IMAGE_PATH);
  const digest = digestField(value, field, problems);
  const size = sizeField(value, field, problems);
  if (version === undefined || source === undefined || path === undefined) return undefined;
  if (digest === undefined || size === undefined) return undefined;
  return { version, source, path, digest, size };
}

function onlyFields(
  value: { [key: string]: JsonValue },
  allowed: readonly string[],
  prefix: string,
  problems: FieldProblem[],
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      problems.push({ field: `${prefix}${key}`, message: 'unknown field' });
  }
}

function stringField(
  value: { [key: string]: JsonValue },
  key: string,
  field: string,
  problems: FieldProblem[],
  pattern: RegExp,
): string | undefined {
  const v = value[key];
  if (typeof v !== 'string' || !pattern.test(v)) {
    problems.push({
      field: `${field}.${key}`,
      message: `must be a string matching ${String(pattern)}`,
    });
    return undefined;
  }
  return v;
}

function urlField(
  value: { [key: string]: JsonValue },
  field: string,
  problems: FieldProblem[],
): string | undefined {
  const v = value['url'];
  if (typeof v === 'string' && v.length <= 2048) {
    try {
      const protocol = new URL(v).protocol;
      if (protocol === 'https:' || protocol === 'http:' || protocol === 'file:') return v;
    } catch {
      // reported below
    }
  }
  problems.push({ field: `${field}.url`, message: 'must be an http(s) or file URL' });
  return undefined;
}

function digestField(
  value: { [key: string]: JsonValue },
  field: string,
  problems: FieldProblem[],
): string | undefined {
  const v = value['digest'];
  if (!isDigest(v)) {
    problems.push({
      field: `${field}.digest`,
      message: 'must be sha256:<64 hex> or sha512:<128 hex>',
    });
    return undefined;
  }
  return v as string;
}

function sizeField(
  value: { [key: string]: JsonValue },
  field: string,
  problems: FieldProblem[],
): number | undefined {
  const v = value['size'];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    problems.push({ field: `${field}.size`, message: 'must be a non-negative integer byte count' });
    return undefined;
  }
  return v;
}

/**
 * Canonical bytes of a manifest: fields in the spec's order, names and architectures sorted,
 * two-space indentation and a final newline. Equal manifests serialize to equal bytes.
 */
export function serializeDependencyManifest(manifest: DependencyManifest): string {
  const dependencies: Record<string, Record<string, DependencyFileEntry>> = {};
  for (const name of Object.keys(manifest.dependencies).sort()) {
    const byArch = manifest.dependencies[name] ?? {};
    const sorted: Record<string, DependencyFileEntry> = {};
    for (const arch of ARCHITECTURES) {
      const e = byArch[arch];
      if (e !== undefined) {
        sorted[arch] = {
          version: e.version,
          url: e.url,
          path: e.path,
          digest: e.digest,
          size: e.size,
        };
      }
    }
    dependencies[name] = sorted;
  }
  const images: Record<string, DependencyImageEntry> = {};
  for (const name of Object.keys(manifest.images).sort()) {
    const e = manifest.images[name];
    if (e !== undefined) {
      images[name] = {
        version: e.version,
        source: e.source,
        path: e.path,
        digest: e.digest,
        size: e.size,
      };
    }
  }
  return `${JSON.stringify({ version: 1, dependencies, images }, null, 2)}\n`;
}

/** A mirrored file's identity parsed from its object key. */
export interface DependencyObjectName {
  name: string;
  version: string;
  arch: Arch;
}

/** Parses `dependencies/<name>/<name>-v<version>-linux-<arch><ext>`; undefined otherwise. */
export function parseDependencyObjectKey(key: string): DependencyObjectName | undefined {
  const match = FILE_PATH.exec(key);
  if (match === null) return undefined;
  const [, folder, name, version, arch] = match;
  if (folder === undefined || folder !== name || version === undefined || arch === undefined) {
    return undefined;
  }
  return isArch(arch) ? { name: folder, version, arch } : undefined;
}
