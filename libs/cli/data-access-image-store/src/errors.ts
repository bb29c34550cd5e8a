import { PodminError } from '@podmin/util-errors';
import type { PodminErrorOptions } from '@podmin/util-errors';

/** A stored blob whose bytes do not hash to its digest (or have the wrong size). */
export class CorruptBlobError extends PodminError {
  constructor(
    readonly digest: string,
    message: string,
    options: PodminErrorOptions = {},
  ) {
    super('IO_ERROR', message, options);
  }
}

/** True when `err` is a {@link CorruptBlobError}. */
export function isCorruptBlob(err: unknown): err is CorruptBlobError {
  return err instanceof CorruptBlobError;
}
