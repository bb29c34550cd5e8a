import { isUtf8 } from 'node:buffer';
import { PodminError } from '@podmin/util-errors';
import type { SecretProviderName } from './secret-store.port';

/** What one provider accepts and supports; the single source of the provider rules. */
export interface ProviderRules {
  /** Largest value in bytes. */
  maxValueBytes: number;
  /** Whether the value must be valid UTF-8 (no binary values). */
  utf8Only: boolean;
  /** Recovery window of `delete` in days; undefined when deletion cannot be scheduled. */
  recoveryWindowDays: number | undefined;
}

/** The rules of every provider, as the spec states them. */
export const PROVIDER_RULES: Readonly<Record<SecretProviderName, Readonly<ProviderRules>>> =
  Object.freeze({
    // Standard-tier parameters hold at most 4 KiB; SecureString values are text.
    'aws-parameter-store': Object.freeze({
      maxValueBytes: 4 * 1024,
      utf8Only: true,
      recoveryWindowDays: undefined,
    }),
    'aws-secrets-manager': Object.freeze({
      maxValueBytes: 64 * 1024,
      utf8Only: false,
      recoveryWindowDays: 30,
    }),
  });

/** Milliseconds in one day, for recovery-window arithmetic. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** Checks a value against its provider's rules; INVALID_ARGUMENT naming the rule broken. */
export function assertValueAllowed(
  provider: SecretProviderName,
  name: string,
  value: Buffer,
): void {
  const rules = PROVIDER_RULES[provider];
  const doing = `storing ${name} in ${provider}`;
  if (value.length === 0) {
    throw new PodminError('INVALID_ARGUMENT', `${doing}: the value is empty`, {
      hint: 'provide a non-empty value',
    });
  }
  if (value.length > rules.maxValueBytes) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: the value is ${value.length} bytes, over the provider's ${rules.maxValueBytes / 1024} KiB limit`,
      {
        hint:
          provider === 'aws-parameter-store'
            ? 'use --provider aws-secrets-manager for values up to 64 KiB'
            : 'store a smaller value, or a reference to it',
      },
    );
  }
  if (rules.utf8Only && !isUtf8(value)) {
    throw new PodminError('INVALID_ARGUMENT', `${doing}: the value is not valid UTF-8 text`, {
      hint: 'use --provider aws-secrets-manager for binary values',
    });
  }
}

/** Which scheduled-deletion operation is being asked of a provider. */
export type RecoveryOperation = 'delete' | 'restore';

/** Rejects `delete`/`restore` on a provider without a recovery window (INVALID_ARGUMENT). */
export function assertRecoverySupported(
  provider: SecretProviderName,
  operation: RecoveryOperation,
  name: string,
): number {
  const days = PROVIDER_RULES[provider].recoveryWindowDays;
  if (days === undefined) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${operation === 'delete' ? 'deleting' : 'restoring'} ${name}: ${provider} has no recovery window, so it cannot ${operation === 'delete' ? 'schedule a deletion' : 'restore a deleted secret'}`,
      {
        hint:
          operation === 'delete'
            ? 'use `podmin secret destroy` to delete it permanently'
            : 'a destroyed parameter is gone; create it again',
      },
    );
  }
  return days;
}

/** The error for any operation on a secret whose deletion is scheduled (PRECONDITION_FAILED). */
export function scheduledForDeletionError(
  doing: string,
  name: string,
  options: { cause?: unknown; deletionDate?: Date } = {},
): PodminError {
  const when =
    options.deletionDate === undefined
      ? ''
      : ` (deleted for good on ${options.deletionDate.toISOString()})`;
  return new PodminError(
    'PRECONDITION_FAILED',
    `${doing}: ${name} is scheduled for deletion${when}`,
    {
      cause: options.cause,
      fault: 'user',
      hint: 'run `podmin secret restore` to cancel the deletion, or `podmin secret destroy` to delete it now',
    },
  );
}
