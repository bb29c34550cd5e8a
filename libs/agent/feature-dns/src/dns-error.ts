import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/** Raised by the Service DNS server; `code` says what kind of failure, the message what and why. */
export class DnsError extends PodminError {
  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    super(code, message, { fault: 'system', ...options });
  }
}
