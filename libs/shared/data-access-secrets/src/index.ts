/** The SecretStore port, provider names and create options. */
export * from './secret-store.port';
/** Secret names: building, parsing and validating `/<cluster>/<namespace>/<pod>/<key>`. */
export {
  SYSTEM_SEGMENT,
  OTEL_LOGS_HEADERS_KEY,
  SECRET_KEY_RULE,
  isSafeSecretKey,
  workloadSecretName,
  systemSecretName,
  parseSecretName,
  assertSecretPrefix,
  type WorkloadSecretName,
  type SystemSecretName,
  type ParsedSecretName,
} from './secret-names';
/** The provider rules (size, UTF-8, recovery window) and the scheduled-for-deletion error. */
export {
  PROVIDER_RULES,
  DAY_MS,
  assertValueAllowed,
  assertRecoverySupported,
  scheduledForDeletionError,
  type ProviderRules,
  type RecoveryOperation,
} from './provider-rules';
/** The aws-parameter-store adapter and its SSM error translation. */
export { ParameterStoreSecretStore, translateSsmError } from './parameter-store-secret-store';
/** The aws-secrets-manager adapter and its error translation. */
export {
  SecretsManagerSecretStore,
  translateSecretsManagerError,
} from './secrets-manager-secret-store';
/** The local file-backed store serving both provider names. */
export { LocalSecretStore, type LocalSecretStoreOptions } from './local-secret-store';
/** AWS client factories for the two AWS adapters. */
export {
  createSsmClient,
  createSecretsManagerClient,
  type AwsSecretsClientOptions,
} from './aws-clients';
/** The agent SecretSource adapter over secret stores. */
export { secretSourceFor, type SecretFetcher, type SecretStoresByProvider } from './secret-source';
