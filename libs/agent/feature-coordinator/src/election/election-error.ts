import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/** Raised by the leader election; `code` says what kind of failure, the message what and why. */
export class ElectionError extends PodminError {
  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    super(code, message, { fault: 'system', ...options });
  }
}
