import { isDigest } from './digest';
import { OciFormatError } from './errors';
import { isValidMediaType } from './media-types';
import type { JsonValue } from './strict-json';
import { isJsonObject } from './strict-json';

/** Platform of an image manifest inside an index. */
export interface Platform {
  /** CPU architecture in Go's GOARCH spelling, e.g. `amd64`, `arm64`. */
  architecture: string;
  /** Operating system in Go's GOOS spelling, e.g. `linux`. */
  os: string;
  /** Operating system version (Windows). */
  'os.version'?: string;
  /** Required operating system features (Windows). */
  'os.features'?: string[];
  /** CPU variant, e.g. `v8` for arm64. */
  variant?: string;
}

/** An OCI content descriptor: what a blob is, its digest and exact size. */
export interface Descriptor {
  /** Media type of the referenced content. */
  mediaType: string;
  /** Digest of the referenced content. */
  digest: string;
  /** Exact size of the referenced content in bytes. */
  size: number;
  /** Alternative download locations. */
  urls?: string[];
  /** Arbitrary string metadata. */
  annotations?: Record<string, string>;
  /** Platform, only on manifests inside an index. */
  platform?: Platform;
  /** Artifact type of an artifact manifest. */
  artifactType?: string;
  /** Embedded base64 content. */
  data?: string;
}

/** Reads the JSON fields of one document at a time, collecting type errors with their path. */
export class FieldReader {
  constructor(
    private readonly what: string,
    private readonly members: { [key: string]: JsonValue },
    private readonly path: string,
  ) {}

  /** Throws an OciFormatError naming this document and field. */
  fail(field: string, message: string): never {
    throw new OciFormatError(`parsing ${this.what}: ${this.path}${field} ${message}`);
  }

  /** The raw member, undefined when absent. */
  raw(field: string): JsonValue | undefined {
    return Object.prototype.hasOwnProperty.call(this.members, field)
      ? this.members[field]
      : undefined;
  }

  /** A required string. */
  string(field: string): string {
    const value = this.raw(field);
    if (typeof value !== 'string') {
      this.fail(field, value === undefined ? 'is required' : 'must be a string');
    }
    return value;
  }

  /** An optional string. */
  optionalString(field: string): string | undefined {
    return this.raw(field) === undefined ? undefined : this.string(field);
  }

  /** An optional array of strings. */
  optionalStringArray(field: string): string[] | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) {
      return undefined;
    }
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      this.fail(field, 'must be an array of strings');
    }
    return value;
  }

  /** An optional map of string to string. */
  optionalStringMap(field: string): Record<string, string> | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) {
      return undefined;
    }
    if (!isJsonObject(value) || !Object.values(value).every((item) => typeof item === 'string')) {
      this.fail(field, 'must be an object of string values');
    }
    return { ...(value as Record<string, string>) };
  }

  /** A required non-negative safe integer. */
  size(field: string): number {
    const value = this.raw(field);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      this.fail(field, 'must be a non-negative integer');
    }
    return value;
  }

  /** A required digest. */
  digest(field: string): string {
    const value = this.string(field);
    if (!isDigest(value)) {
      this.fail(
        field,
        `must be a sha256 or sha512 digest, not ${JSON.stringify(value.slice(0, 200))}`,
      );
    }
    return value;
  }

  /** A required media type. */
  mediaType(field: string): string {
    const value = this.string(field);
    if (!isValidMediaType(value)) {
      this.fail(field, `must be a media type, not ${JSON.stringify(value.slice(0, 200))}`);
    }
    return value;
  }

  /** A nested object read with its own reader; undefined when absent. */
  optionalObject(field: string): FieldReader | undefined {
    const value = this.raw(field);
    if (value === undefined) {
      return undefined;
    }
    if (!isJsonObject(value)) {
      this.fail(field, 'must be an object');
    }
    return new FieldReader(this.what, value, `${this.path}${field}.`);
  }

  /** A required nested object. */
  object(field: string): FieldReader {
    const reader = this.optionalObject(field);
    if (reader === undefined) {
      this.fail(field, 'is required');
    }
    return reader;
  }

  /** A required array of objects, each read with its own reader. */
  objectArray(field: string, options: { optional?: boolean } = {}): FieldReader[] {
    const value = this.raw(field);
    if ((value === undefined || value === null) && options.optional === true) {
      return [];
    }
    if (!Array.isArray(value)) {
      this.fail(field, value === undefined ? 'is required' : 'must be an array');
    }
    return value.map((item, i) => {
      if (!isJsonObject(item)) {
        this.fail(`${field}[${i}]`, 'must be an object');
      }
      return new FieldReader(this.what, item, `${this.path}${field}[${i}].`);
    });
  }
}

/** Reads and validates one descriptor. */
export function readDescriptor(reader: FieldReader): Descriptor {
  const descriptor: Descriptor = {
    mediaType: reader.mediaType('mediaType'),
    digest: reader.digest('digest'),
    size: reader.size('size'),
  };
  const urls = reader.optionalStringArray('urls');
  if (urls !== undefined) descriptor.urls = urls;
  const annotations = reader.optionalStringMap('annotations');
  if (annotations !== undefined) descriptor.annotations = annotations;
  const artifactType = reader.optionalString('artifactType');
  if (artifactType !== undefined) descriptor.artifactType = artifactType;
  const data = reader.optionalString('data');
  if (data !== undefined) descriptor.data = data;
  const platform = reader.optionalObject('platform');
  if (platform !== undefined) descriptor.platform = readPlatform(platform);
  return descriptor;
}

function readPlatform(reader: FieldReader): Platform {
  const platform: Platform = {
    architecture: reader.string('architecture'),
    os: reader.string('os'),
  };
  const osVersion = reader.optionalString('os.version');
  if (osVersion !== undefined) platform['os.version'] = osVersion;
  const osFeatures = reader.optionalStringArray('os.features');
  if (osFeatures !== undefined) platform['os.features'] = osFeatures;
  const variant = reader.optionalString('variant');
  if (variant !== undefined) platform.variant = variant;
  return platform;
}

/** Formats a platform as `os/architecture[/variant]`, e.g. `linux/arm64/v8`. */
export function formatPlatform(platform: Platform): string {
  return [platform.os, platform.architecture, platform.variant]
    .filter((p) => p !== undefined && p !== '')
    .join('/');
}

/** Parses `os/architecture[/variant]`; OciFormatError when malformed. */
export function parsePlatform(value: string): Platform {
  const parts = value.split('/');
  const component = /^[a-z0-9_.-]+$/;
  if (parts.length < 2 || parts.length > 3 || !parts.every((p) => component.test(p))) {
    throw new OciFormatError(
      `parsing platform ${JSON.stringify(value)}: must be os/architecture[/variant], e.g. linux/amd64`,
    );
  }
  const [os = '', architecture = '', variant] = parts;
  return variant === undefined ? { os, architecture } : { os, architecture, variant };
}
