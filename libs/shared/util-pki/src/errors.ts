import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode, PodminErrorOptions } from '@podmin/util-errors';

/** Why a PKI operation refused its input; callers branch on this, never on message text. */
export type PkiErrorReason =
  | 'INVALID_NAME'
  | 'INVALID_SECRET'
  | 'INVALID_CERTIFICATE'
  | 'INVALID_KEY'
  | 'CA_KEY_MISMATCH'
  | 'CHAIN_INVALID'
  | 'PEER_REJECTED';

const CODE_OF: Record<PkiErrorReason, PodminErrorCode> = {
  INVALID_NAME: 'INVALID_ARGUMENT',
  INVALID_SECRET: 'CONFIG_INVALID',
  INVALID_CERTIFICATE: 'INVALID_ARGUMENT',
  INVALID_KEY: 'INVALID_ARGUMENT',
  CA_KEY_MISMATCH: 'PRECONDITION_FAILED',
  CHAIN_INVALID: 'PRECONDITION_FAILED',
  PEER_REJECTED: 'ACCESS_DENIED',
};

/** Raised by `@podmin/util-pki`: a PodminError with a finer, PKI-specific `reason`. */
export class PkiError extends PodminError {
  readonly reason: PkiErrorReason;

  constructor(reason: PkiErrorReason, message: string, options: PodminErrorOptions = {}) {
    super(CODE_OF[reason], message, {
      ...options,
      fault: options.fault ?? (reason === 'INVALID_SECRET' ? 'user' : 'system'),
    });
    this.reason = reason;
  }
}

/** True when `err` is a PkiError with the given reason. */
export function hasPkiReason(err: unknown, reason: PkiErrorReason): err is PkiError {
  return err instanceof PkiError && err.reason === reason;
}
