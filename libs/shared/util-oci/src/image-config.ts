import { FieldReader } from './descriptor';
import { OciFormatError } from './errors';
import { isDigest } from './digest';
import { isJsonObject, parseStrictJson } from './strict-json';

/** Largest image configuration podmin reads. */
export const MAX_IMAGE_CONFIG_BYTES = 4 * 1024 * 1024;

/** The execution parameters of an image (`config` in the OCI image configuration). */
export interface ContainerConfig {
  /** User or UID[:GID] the process runs as. */
  User?: string;
  /** `NAME=value` environment entries. */
  Env?: string[];
  /** Executable and leading arguments. */
  Entrypoint?: string[];
  /** Default arguments. */
  Cmd?: string[];
  /** Working directory. */
  WorkingDir?: string;
  /** Image labels. */
  Labels?: Record<string, string>;
  /** Exposed ports as `port/proto` keys with empty-object values. */
  ExposedPorts?: Record<string, Record<string, never>>;
  /** Volumes as path keys with empty-object values. */
  Volumes?: Record<string, Record<string, never>>;
  /** Signal that stops the container. */
  StopSignal?: string;
}

/** One history entry of an image configuration. */
export interface HistoryEntry {
  /** RFC 3339 creation time. */
  created?: string;
  /** Who created the step. */
  author?: string;
  /** The instruction that created the step. */
  created_by?: string;
  /** Free-form comment. */
  comment?: string;
  /** True when the step created no layer. */
  empty_layer?: boolean;
}

/** An OCI image configuration (also valid as a Docker image configuration). */
export interface ImageConfig {
  /** CPU architecture (GOARCH). */
  architecture: string;
  /** Operating system (GOOS). */
  os: string;
  /** CPU variant. */
  variant?: string;
  /** RFC 3339 creation time. */
  created?: string;
  /** Image author. */
  author?: string;
  /** Execution parameters. */
  config?: ContainerConfig;
  /** Uncompressed layer digests, base first. */
  rootfs: { type: 'layers'; diff_ids: string[] };
  /** Build history. */
  history?: HistoryEntry[];
}

/** Parses an image configuration strictly: bounded, no duplicate keys, typed known fields. */
export function parseImageConfig(bytes: Buffer | string, what = 'image config'): ImageConfig {
  const json = parseStrictJson(bytes, what, { maxBytes: MAX_IMAGE_CONFIG_BYTES });
  if (!isJsonObject(json)) {
    throw new OciFormatError(`parsing ${what}: must be a JSON object`);
  }
  const reader: FieldReader = new FieldReader(what, json, '');
  const rootfs: FieldReader = reader.object('rootfs');
  if (rootfs.string('type') !== 'layers') {
    rootfs.fail('type', 'must be "layers"');
  }
  const diffIds = rootfs.optionalStringArray('diff_ids');
  if (diffIds === undefined) {
    rootfs.fail('diff_ids', 'is required');
  }
  diffIds.forEach((id, i) => {
    if (!isDigest(id)) rootfs.fail(`diff_ids[${i}]`, 'must be a sha256 or sha512 digest');
  });
  const config: ImageConfig = {
    architecture: reader.string('architecture'),
    os: reader.string('os'),
    rootfs: { type: 'layers', diff_ids: diffIds },
  };
  const optional: Partial<ImageConfig> = {
    variant: reader.optionalString('variant'),
    created: reader.optionalString('created'),
    author: reader.optionalString('author'),
    config: readContainerConfig(reader.optionalObject('config')),
    history: reader.objectArray('history', { optional: true }).map(readHistory),
  };
  if (optional.history?.length === 0) delete optional.history;
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  return config;
}

function readContainerConfig(reader: FieldReader | undefined): ContainerConfig | undefined {
  if (reader === undefined) {
    return undefined;
  }
  const result: ContainerConfig = {};
  const fields: Partial<ContainerConfig> = {
    User: reader.optionalString('User'),
    Env: reader.optionalStringArray('Env'),
    Entrypoint: reader.optionalStringArray('Entrypoint'),
    Cmd: reader.optionalStringArray('Cmd'),
    WorkingDir: reader.optionalString('WorkingDir'),
    Labels: reader.optionalStringMap('Labels'),
    ExposedPorts: emptyObjectSet(reader, 'ExposedPorts'),
    Volumes: emptyObjectSet(reader, 'Volumes'),
    StopSignal: reader.optionalString('StopSignal'),
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (result as Record<string, unknown>)[key] = value;
  }
  return result;
}

function emptyObjectSet(
  reader: FieldReader,
  field: string,
): Record<string, Record<string, never>> | undefined {
  const value = reader.raw(field);
  if (value === undefined || value === null) {
    return undefined;
  }
  if (!isJsonObject(value) || !Object.values(value).every((v) => isJsonObject(v))) {
    reader.fail(field, 'must be an object whose values are objects');
  }
  return Object.fromEntries(Object.keys(value).map((k) => [k, {}]));
}

function readHistory(reader: FieldReader): HistoryEntry {
  const entry: HistoryEntry = {};
  const fields: Partial<HistoryEntry> = {
    created: reader.optionalString('created'),
    author: reader.optionalString('author'),
    created_by: reader.optionalString('created_by'),
    comment: reader.optionalString('comment'),
  };
  const empty = reader.raw('empty_layer');
  if (empty !== undefined && typeof empty !== 'boolean') {
    reader.fail('empty_layer', 'must be a boolean');
  }
  if (empty !== undefined) entry.empty_layer = empty;
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (entry as Record<string, unknown>)[key] = value;
  }
  return entry;
}
