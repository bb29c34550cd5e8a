import type { Descriptor } from './descriptor';
import { FieldReader, readDescriptor } from './descriptor';
import { OciFormatError } from './errors';
import {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  isImageManifestMediaType,
  isIndexMediaType,
} from './media-types';
import { isJsonObject, parseStrictJson } from './strict-json';

/** Largest manifest or index podmin reads: the distribution spec's 4 MiB minimum a registry accepts. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** An OCI image index or Docker manifest list. */
export interface ImageIndex {
  /** Always 2. */
  schemaVersion: 2;
  /** `application/vnd.oci.image.index.v1+json` or the Docker manifest list type; optional for OCI. */
  mediaType?: string;
  /** Artifact type of an artifact index. */
  artifactType?: string;
  /** The listed manifests. */
  manifests: Descriptor[];
  /** Manifest this one refers to (referrers API). */
  subject?: Descriptor;
  /** Arbitrary string metadata. */
  annotations?: Record<string, string>;
}

/** An OCI image manifest or Docker schema 2 manifest. */
export interface ImageManifest {
  /** Always 2. */
  schemaVersion: 2;
  /** `application/vnd.oci.image.manifest.v1+json` or the Docker v2 type; optional for OCI. */
  mediaType?: string;
  /** Artifact type of an artifact manifest. */
  artifactType?: string;
  /** The image configuration blob. */
  config: Descriptor;
  /** Layer blobs, base first. */
  layers: Descriptor[];
  /** Manifest this one refers to (referrers API). */
  subject?: Descriptor;
  /** Arbitrary string metadata. */
  annotations?: Record<string, string>;
}

/** A parsed manifest document, tagged by kind, with the media type it is served as. */
export type ParsedManifest =
  | { kind: 'index'; mediaType: string; index: ImageIndex }
  | { kind: 'manifest'; mediaType: string; manifest: ImageManifest };

/** Parses an OCI image index or Docker manifest list strictly (bounded, no duplicate keys). */
export function parseImageIndex(bytes: Buffer | string, what = 'image index'): ImageIndex {
  const parsed = parseManifest(bytes, what);
  if (parsed.kind !== 'index') {
    throw new OciFormatError(`parsing ${what}: is an image manifest, not an index`);
  }
  return parsed.index;
}

/** Parses an OCI image manifest or Docker schema 2 manifest strictly. */
export function parseImageManifest(bytes: Buffer | string, what = 'image manifest'): ImageManifest {
  const parsed = parseManifest(bytes, what);
  if (parsed.kind !== 'manifest') {
    throw new OciFormatError(`parsing ${what}: is an image index, not a manifest`);
  }
  return parsed.manifest;
}

/**
 * Parses any manifest document podmin handles: OCI index or manifest, Docker manifest list or
 * v2 manifest. The kind comes from `mediaType` when present, else from the fields (an OCI
 * document may omit it). Unknown fields are ignored, as the OCI image spec requires.
 */
export function parseManifest(bytes: Buffer | string, what = 'manifest'): ParsedManifest {
  const json = parseStrictJson(bytes, what, { maxBytes: MAX_MANIFEST_BYTES });
  if (!isJsonObject(json)) {
    throw new OciFormatError(`parsing ${what}: must be a JSON object`);
  }
  const reader: FieldReader = new FieldReader(what, json, '');
  if (reader.raw('schemaVersion') !== 2) {
    reader.fail('schemaVersion', `must be 2, not ${JSON.stringify(reader.raw('schemaVersion'))}`);
  }
  const declared =
    reader.raw('mediaType') === undefined ? undefined : reader.mediaType('mediaType');
  const hasManifests = reader.raw('manifests') !== undefined;
  const hasConfig = reader.raw('config') !== undefined;
  if (
    declared !== undefined &&
    !isIndexMediaType(declared) &&
    !isImageManifestMediaType(declared)
  ) {
    reader.fail(
      'mediaType',
      `${JSON.stringify(declared)} is not an OCI or Docker schema 2 manifest type`,
    );
  }
  if (hasManifests && hasConfig) {
    reader.fail('', 'has both "manifests" and "config"; it cannot be both an index and a manifest');
  }
  const isIndex = declared !== undefined ? isIndexMediaType(declared) : hasManifests;
  if (!isIndex && !hasConfig && declared === undefined) {
    reader.fail('', 'has neither "manifests" nor "config"');
  }
  const common = {
    artifactType: reader.optionalString('artifactType'),
    subject: optionalDescriptor(reader, 'subject'),
    annotations: reader.optionalStringMap('annotations'),
  };
  if (isIndex) {
    const index: ImageIndex = {
      schemaVersion: 2,
      manifests: reader.objectArray('manifests').map(readDescriptor),
    };
    assign(index, { mediaType: declared, ...common });
    return { kind: 'index', mediaType: declared ?? OCI_INDEX_MEDIA_TYPE, index };
  }
  const manifest: ImageManifest = {
    schemaVersion: 2,
    config: readDescriptor(reader.object('config')),
    layers: reader.objectArray('layers').map(readDescriptor),
  };
  assign(manifest, { mediaType: declared, ...common });
  return { kind: 'manifest', mediaType: declared ?? OCI_MANIFEST_MEDIA_TYPE, manifest };
}

function optionalDescriptor(reader: FieldReader, field: string): Descriptor | undefined {
  const nested = reader.optionalObject(field);
  return nested === undefined ? undefined : readDescriptor(nested);
}

function assign<T extends object>(target: T, optional: Partial<T>): void {
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) {
      (target as Record<string, unknown>)[key] = value;
    }
  }
}

/** True for the two Docker schema 2 media types, which require `mediaType` in the document. */
export function isDockerMediaType(mediaType: string): boolean {
  return mediaType === DOCKER_MANIFEST_LIST_MEDIA_TYPE || mediaType === DOCKER_MANIFEST_MEDIA_TYPE;
}
