import { Inject, Injectable } from '@nestjs/common';
import { hasCode } from '@podmin/util-errors';
import {
  LAYOUT_INDEX_FILE,
  MAX_LAYOUT_INDEX_BYTES,
  MAX_MANIFEST_BYTES,
  blobPath,
  clusterRepositoryProblem,
  findByDigest,
  findTagged,
  isDigest,
  isValidTag,
  matchesDigest,
  parseImageIndex,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex } from '@podmin/util-oci';
import { isAcceptable } from './negotiation';
import { RegistryError } from './registry-error';
import type { ByteRange, ObjectBody } from '@podmin/data-access-object-store';
import type { RegistryStore } from './registry.ports';
import { REGISTRY_STORE } from './registry.ports';

/** A resolved manifest: what to send in headers, and the verified bytes for GET. */
export interface ManifestResult {
  /** Media type stored in the layout index. */
  mediaType: string;
  /** Digest of the manifest. */
  digest: string;
  /** Size in bytes. */
  size: number;
  /** Verified manifest bytes; undefined for HEAD. */
  body: Buffer | undefined;
}

/** Metadata of a blob. */
export interface BlobInfo {
  /** Digest requested (and verified on full reads). */
  digest: string;
  /** Total size in bytes. */
  size: number;
}

/** A blob opened for sending, whole (to be verified while it is sent) or as one range. */
export interface OpenedBlob extends BlobInfo {
  /** The bytes to send; the caller must close it. */
  body: ObjectBody;
  /** The served range when partial; undefined for the whole blob. */
  range: { start: number; end: number } | undefined;
  /** The digest the bytes must hash to when the whole blob is sent; undefined for a part. */
  verifyAgainst: string | undefined;
}

/**
 * Resolves pull requests against OCI layouts in the bucket: a tag or digest through
 * `<repository>/index.json` (whose top level lists every nested manifest), then the blob at
 * `<repository>/blobs/<algorithm>/<hex>`. At most two object reads per request.
 */
@Injectable()
export class RegistryService {
  constructor(@Inject(REGISTRY_STORE) private readonly store: RegistryStore) {}

  /** Resolves a manifest by tag or digest; with `withBody`, reads and verifies its bytes. */
  async manifest(
    name: string,
    reference: string,
    accept: string | undefined,
    withBody: boolean,
  ): Promise<ManifestResult> {
    checkName(name);
    const byDigest = reference.includes(':');
    if (byDigest && !isDigest(reference)) {
      throw new RegistryError(
        'DIGEST_INVALID',
        `${reference.slice(0, 200)} is not a sha256 or sha512 digest`,
      );
    }
    if (!byDigest && !isValidTag(reference)) {
      throw new RegistryError('TAG_INVALID', `${reference.slice(0, 200)} is not a valid tag`);
    }
    const index = await this.readIndex(name);
    const descriptor: Descriptor | undefined = byDigest
      ? findByDigest(index, reference)
      : findTagged(index, reference);
    if (descriptor === undefined) {
      throw new RegistryError(
        'MANIFEST_UNKNOWN',
        `manifest ${reference} is not in repository ${name}`,
      );
    }
    if (!isAcceptable(descriptor.mediaType, accept)) {
      throw new RegistryError(
        'MANIFEST_UNKNOWN',
        `manifest ${reference} of ${name} is stored as ${descriptor.mediaType}, which the Accept header does not allow`,
      );
    }
    if (descriptor.size > MAX_MANIFEST_BYTES) {
      throw new RegistryError(
        'MANIFEST_TOO_LARGE',
        `manifest ${descriptor.digest} of ${name} is over ${MAX_MANIFEST_BYTES} bytes`,
      );
    }
    const result: ManifestResult = {
      mediaType: descriptor.mediaType,
      digest: descriptor.digest,
      size: descriptor.size,
      body: undefined,
    };
    if (!withBody) {
      return result;
    }
    const key = `${name}/${blobPath(descriptor.digest)}`;
    const body = await this.read(
      key,
      MAX_MANIFEST_BYTES,
      () =>
        new RegistryError(
          'MANIFEST_UNKNOWN',
          `manifest ${descriptor.digest} of ${name} is listed but its blob is missing`,
        ),
    );
    if (body.length !== descriptor.size || !matchesDigest(body, descriptor.digest)) {
      // Never serve bytes that do not match the digest the client will check them against.
      throw new RegistryError(
        'MANIFEST_CORRUPT',
        `stored manifest ${descriptor.digest} of ${name} does not match its digest or size`,
      );
    }
    result.body = body;
    return result;
  }

  /** Size of a blob, from the object's metadata. */
  async blobInfo(name: string, digest: string): Promise<BlobInfo> {
    const key = this.blobKey(name, digest);
    try {
      const { size } = await this.store.head(key);
      return { digest, size };
    } catch (err) {
      throw translateMissing(err, () => blobUnknown(name, digest));
    }
  }

  /** Opens a blob for sending; a whole blob comes with the digest to verify it against. */
  async openBlob(name: string, digest: string, range: ByteRange | undefined): Promise<OpenedBlob> {
    const key = this.blobKey(name, digest);
    let opened;
    try {
      opened = await this.store.openRead(key, range === undefined ? {} : { range });
    } catch (err) {
      throw translateMissing(err, () => blobUnknown(name, digest));
    }
    if (opened.kind === 'unsatisfiable') {
      throw new RegistryError(
        'RANGE_NOT_SATISFIABLE',
        `the requested range is outside blob ${digest}`,
        { size: opened.size },
      );
    }
    const whole = opened.start === 0 && opened.end === opened.size - 1;
    return {
      digest,
      size: opened.size,
      body: opened.body,
      range: range === undefined ? undefined : { start: opened.start, end: opened.end },
      verifyAgainst: range === undefined || whole ? digest : undefined,
    };
  }

  private blobKey(name: string, digest: string): string {
    checkName(name);
    if (!isDigest(digest)) {
      throw new RegistryError(
        'DIGEST_INVALID',
        `${digest.slice(0, 200)} is not a sha256 or sha512 digest`,
      );
    }
    return `${name}/${blobPath(digest)}`;
  }

  private async readIndex(name: string): Promise<ImageIndex> {
    const bytes = await this.read(
      `${name}/${LAYOUT_INDEX_FILE}`,
      MAX_LAYOUT_INDEX_BYTES,
      () => new RegistryError('NAME_UNKNOWN', `repository ${name} is not in the bucket`),
    );
    try {
      return parseImageIndex(bytes, `${name}/${LAYOUT_INDEX_FILE}`);
    } catch (err) {
      throw new RegistryError(
        'INDEX_INVALID',
        `reading ${name}/${LAYOUT_INDEX_FILE}: the stored index is invalid`,
        { cause: err },
      );
    }
  }

  private async read(key: string, maxBytes: number, missing: () => RegistryError): Promise<Buffer> {
    try {
      return (await this.store.get(key, { maxBytes })).body;
    } catch (err) {
      throw translateMissing(err, missing);
    }
  }
}

function checkName(name: string): void {
  const problem = clusterRepositoryProblem(name);
  if (problem?.kind === 'invalid') {
    throw new RegistryError('NAME_INVALID', problem.message);
  }
  if (problem !== undefined) {
    throw new RegistryError('NAME_UNKNOWN', problem.message);
  }
}

function blobUnknown(name: string, digest: string): RegistryError {
  return new RegistryError('BLOB_UNKNOWN', `blob ${digest} is not in repository ${name}`);
}

/** Replaces OBJECT_NOT_FOUND with the registry's "unknown" error; passes anything else on. */
function translateMissing(err: unknown, missing: () => RegistryError): unknown {
  return hasCode(err, 'OBJECT_NOT_FOUND') ? missing() : err;
}
