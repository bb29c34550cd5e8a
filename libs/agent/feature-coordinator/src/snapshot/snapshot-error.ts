import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/** Raised by the Service snapshot code; `code` says what kind of failure, the message what and why. */
export class SnapshotError extends PodminError {
  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    // A bad snapshot object or a lost fencing race is never the operator's input.
    super(code, message, { fault: 'system', ...options });
  }
}

/**
 * `dns/services.pb` exists but does not decode (INVALID_ARGUMENT). Carries the object's ETag so a
 * leader can replace it by `If-Match` instead of being stuck behind it forever.
 */
export class SnapshotCorruptError extends SnapshotError {
  constructor(
    message: string,
    /** ETag of the object that failed to decode. */
    readonly etag: string,
    options: PodminErrorOptions = {},
  ) {
    super('INVALID_ARGUMENT', message, options);
  }
}
