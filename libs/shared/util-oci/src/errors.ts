import { PodminError } from '@podmin/util-errors';
import type { PodminErrorOptions } from '@podmin/util-errors';

/** Raised when OCI content (JSON document, digest, reference) does not follow its format. */
export class OciFormatError extends PodminError {
  constructor(message: string, options: PodminErrorOptions = {}) {
    super('INVALID_ARGUMENT', message, options);
  }
}
