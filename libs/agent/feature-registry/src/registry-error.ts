import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/**
 * Why the registry refuses a request. The OCI error filter maps each reason to an HTTP status
 * and OCI error code; nothing else does.
 */
export type RegistryRefusal =
  /** A method other than GET or HEAD: the registry is read-only. */
  | 'READ_ONLY'
  /** Listing, uploads, or a path outside the distribution pull API. */
  | 'ENDPOINT_UNSUPPORTED'
  /** The repository name breaks the distribution grammar. */
  | 'NAME_INVALID'
  /** The repository is outside `apps/` and `mirror/`, or has no layout index. */
  | 'NAME_UNKNOWN'
  /** The tag breaks the distribution grammar. */
  | 'TAG_INVALID'
  /** The digest is not a sha256 or sha512 digest. */
  | 'DIGEST_INVALID'
  /** No such tag or digest, the Accept header excludes it, or its blob is missing. */
  | 'MANIFEST_UNKNOWN'
  /** No such blob in the repository. */
  | 'BLOB_UNKNOWN'
  /** The requested range lies outside the blob. */
  | 'RANGE_NOT_SATISFIABLE'
  /** A stored manifest does not match its digest or size. */
  | 'MANIFEST_CORRUPT'
  /** A listed manifest is larger than the registry reads. */
  | 'MANIFEST_TOO_LARGE'
  /** The stored layout index does not parse. */
  | 'INDEX_INVALID'
  /** Every blob transfer slot is taken: retry shortly. */
  | 'BUSY';

/** The podmin code of each refusal: who is at fault and how callers branch on it. */
const CODES: Record<RegistryRefusal, PodminErrorCode> = {
  READ_ONLY: 'INVALID_ARGUMENT',
  ENDPOINT_UNSUPPORTED: 'NOT_FOUND',
  NAME_INVALID: 'INVALID_ARGUMENT',
  NAME_UNKNOWN: 'NOT_FOUND',
  TAG_INVALID: 'INVALID_ARGUMENT',
  DIGEST_INVALID: 'INVALID_ARGUMENT',
  MANIFEST_UNKNOWN: 'NOT_FOUND',
  BLOB_UNKNOWN: 'NOT_FOUND',
  RANGE_NOT_SATISFIABLE: 'INVALID_ARGUMENT',
  MANIFEST_CORRUPT: 'INTERNAL',
  MANIFEST_TOO_LARGE: 'OBJECT_TOO_LARGE',
  INDEX_INVALID: 'INTERNAL',
  BUSY: 'SERVICE_UNAVAILABLE',
};

/** Options of a registry refusal. */
export interface RegistryErrorOptions extends PodminErrorOptions {
  /** Size of the object, for RANGE_NOT_SATISFIABLE (sent in the 416 response's Content-Range). */
  size?: number;
}

/** A request the registry refuses: a PodminError whose `refusal` says why. */
export class RegistryError extends PodminError {
  /** Why the request is refused; the OCI error filter maps it to the response. */
  readonly refusal: RegistryRefusal;
  /** Size of the object a range fell outside of, when known. */
  readonly size: number | undefined;

  constructor(refusal: RegistryRefusal, message: string, options: RegistryErrorOptions = {}) {
    super(CODES[refusal], message, options);
    this.refusal = refusal;
    this.size = options.size;
  }
}
