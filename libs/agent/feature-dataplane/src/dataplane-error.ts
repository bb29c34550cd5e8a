import { PodminError, type PodminErrorCode, type PodminErrorOptions } from '@podmin/util-errors';

/** A dataplane failure: loading, attaching or programming the eBPF VIP dataplane. */
export class DataplaneError extends PodminError {
  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    super(code, message, { fault: 'system', ...options });
  }
}
