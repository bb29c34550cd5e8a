/** The provider names a Pod annotation or a secret command may use. */
export const SECRET_PROVIDERS = ['aws-parameter-store', 'aws-secrets-manager'] as const;

/** One secret provider: AWS SSM Parameter Store or AWS Secrets Manager (also served locally). */
export type SecretProviderName = (typeof SECRET_PROVIDERS)[number];

/** True when `value` names a secret provider. */
export function isSecretProviderName(value: string): value is SecretProviderName {
  return (SECRET_PROVIDERS as readonly string[]).includes(value);
}

/** Optional settings of a newly created secret. */
export interface CreateSecretOptions {
  /** Human-readable description stored beside the value (never the value itself). */
  description?: string;
  /** KMS key id, ARN or alias for AWS providers; the account's default key when omitted. */
  kmsKeyId?: string;
}

/**
 * One provider's secret store. Names are full secret names (`/<cluster>/<namespace>/<pod>/<key>`
 * or `/<cluster>/_system/<key>`); every adapter enforces its provider's rules
 * (`provider-rules.ts`) and reports `PodminError`s: NOT_FOUND, ALREADY_EXISTS,
 * PRECONDITION_FAILED (scheduled for deletion), INVALID_ARGUMENT, ACCESS_DENIED, IO_ERROR.
 */
export interface SecretStore {
  /** The provider whose rules this store applies. */
  readonly provider: SecretProviderName;
  /** Creates a secret; ALREADY_EXISTS when the name is taken. */
  create(name: string, value: Buffer, options?: CreateSecretOptions): Promise<void>;
  /** Replaces the value of an existing secret; NOT_FOUND when absent. */
  update(name: string, value: Buffer): Promise<void>;
  /** The current value; NOT_FOUND when absent, PRECONDITION_FAILED when scheduled for deletion. */
  get(name: string): Promise<Buffer>;
  /**
   * Whether a live secret has this name, from metadata only: the value is never read or
   * decrypted. False when absent; PRECONDITION_FAILED when scheduled for deletion (as `get`).
   */
  exists(name: string): Promise<boolean>;
  /** Names of every live secret under `prefix` (which starts and ends with "/"), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Schedules deletion with the provider's recovery window (rejected where none exists). */
  delete(name: string): Promise<void>;
  /** Cancels a scheduled deletion (rejected where deletion cannot be scheduled). */
  restore(name: string): Promise<void>;
  /** Deletes permanently, at once, without recovery. */
  destroy(name: string): Promise<void>;
}

/** Settings shared by the AWS adapters. */
export interface AwsSecretStoreOptions {
  /** Page size of listing calls (the API maximum by default; small in tests of pagination). */
  pageSize?: number;
}
