import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/** Raised by node-to-node coordination; ACCESS_DENIED for a refused peer, the message says why. */
export class CoordinationError extends PodminError {
  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    super(code, message, { fault: 'system', ...options });
  }
}
