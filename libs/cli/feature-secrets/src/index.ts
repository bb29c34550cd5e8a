/** Ports of the secret commands: store opener, value input, dependencies. */
export * from './secrets.ports';
/** The `podmin secret` operations. */
export {
  createSecret,
  updateSecret,
  deleteSecret,
  restoreSecret,
  destroySecret,
  listSecrets,
  type WriteSecretOptions,
  type DestroySecretOptions,
  type ListSecretsOptions,
  type SecretListing,
} from './secret-commands';
/** Flag resolution: names, providers, and the system-key allowlist. */
export {
  USER_SYSTEM_KEYS,
  INTERNAL_SYSTEM_KEYS,
  defaultSecretProvider,
  resolveProvider,
  resolveSecretTarget,
  assertUserSystemKey,
  type SecretAddress,
  type SecretTarget,
} from './secret-target';
/** Reading a value from a file, stdin or a hidden prompt. */
export { readSecretValue, type ValueSource } from './secret-value';
/** Validation of the otel-logs-headers value. */
export { assertOtelHeaders } from './otel-headers';
/** Opening a context's secret stores, and the local secrets file path. */
export {
  awsSecretStoreOpener,
  localSecretStoreOpener,
  localSecretsFile,
} from './open-secret-store';
/** The terminal implementation of SecretValueInput. */
export { TerminalSecretInput, type SecretInputStreams } from './terminal-secret-input';
/** Create-only storage of setup's system secrets. */
export {
  storeSetupSecrets,
  destroySetupSecrets,
  type SetupSecrets,
  type SetupSecretsResult,
} from './setup-secrets';
