import type { AgentProcessConfig, AgentProviderRules } from '@podmin/agent-util-config';
import type * as objectStoreLib from '@podmin/data-access-object-store';
import type * as secretsLib from '@podmin/data-access-secrets';

/** Process environment (endpoint overrides for emulators). */
export type ProcessEnv = Readonly<Record<string, string | undefined>>;

/** A node's secret stores, one for every secrets-provider name. */
export type NodeSecretStores = Required<{
  [K in keyof secretsLib.SecretStoresByProvider]: secretsLib.SecretStore;
}>;

/**
 * The store adapters a provider builds its stores from, handed in by the openers: the registry
 * itself loads no SDK, so processes that only parse flags (the supervisor, agent-dns,
 * agent-dataplane) never bundle or load one.
 */
export interface StoreAdapters {
  /** The object-store adapters. */
  readonly objects: Pick<
    typeof objectStoreLib,
    'LocalDirectoryObjectStore' | 'S3ObjectStore' | 'createS3Client'
  >;
  /** The secret-store adapters. */
  readonly secrets: Pick<
    typeof secretsLib,
    | 'LocalSecretStore'
    | 'ParameterStoreSecretStore'
    | 'SecretsManagerSecretStore'
    | 'createSsmClient'
    | 'createSecretsManagerClient'
  >;
}

/**
 * Everything the agent's processes ask of a provider (aws, local, and later e.g. Google Cloud):
 * its configuration rules and node identity, and its stores opened with its endpoint settings.
 */
export interface AgentProvider extends AgentProviderRules {
  /** Opens the node's cluster bucket. */
  openBucket(
    config: AgentProcessConfig,
    env: ProcessEnv,
    adapters: StoreAdapters,
  ): objectStoreLib.ObjectStore;
  /** Opens another S3 bucket the node writes to (the `--workload-ca-publish` destination). */
  openS3Bucket(
    config: AgentProcessConfig,
    env: ProcessEnv,
    bucket: string,
    adapters: StoreAdapters,
  ): objectStoreLib.ObjectStore;
  /**
   * Node facts only the provider's services can tell, read once when podmin-agent starts and
   * handed to every service process as environment (aws: the node address from IMDS, and IMDS
   * on IPv6 for the SDK's instance credentials); variables already set are kept.
   */
  startEnvironment?(env: ProcessEnv): Promise<Readonly<Record<string, string>>>;
  /** Opens the node's secret stores by secrets-provider name. */
  openSecretStores(
    config: AgentProcessConfig,
    env: ProcessEnv,
    adapters: StoreAdapters,
  ): NodeSecretStores;
}

/** The AWS services an agent builds clients for, by their AWS_ENDPOINT_URL_<SERVICE> suffix. */
export type AgentAwsService = 'S3' | 'SSM' | 'SECRETS_MANAGER';

/**
 * Every agent AWS request connects within 3 s and fails after 10 s of silence: a bucket that
 * accepts connections but never answers (or a path that drops packets) must fail the loop's
 * round, which retries on its own schedule, not hang it for good.
 */
export const AGENT_AWS_TIMEOUTS = Object.freeze({ connectMs: 3_000, idleMs: 10_000 });

/**
 * One attempt per bucket request: every agent loop retries through its fault backoff at most
 * once per poll, so SDK retries on top would multiply the requests of an outage.
 */
export const AGENT_S3_MAX_ATTEMPTS = 1;

/** Where an agent's AWS client sends requests (an explicit endpoint, or the dual-stack one), and its bounds. */
export type AgentAwsClientOptions = (
  | { readonly region: string; readonly endpoint: string }
  | { readonly region: string; readonly dualStack: true }
) & { readonly timeouts: typeof AGENT_AWS_TIMEOUTS };

/**
 * The one place every AWS client of every agent process gets its endpoint: the regional
 * dual-stack endpoint (nodes have no IPv4, and the IPv4-only endpoints would not answer), unless
 * AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL names one (an emulator in tests).
 */
export function agentAwsClientOptions(
  service: AgentAwsService,
  region: string,
  env: ProcessEnv,
): AgentAwsClientOptions {
  const endpoint = env[`AWS_ENDPOINT_URL_${service}`] ?? env['AWS_ENDPOINT_URL'];
  const timeouts = AGENT_AWS_TIMEOUTS;
  return endpoint ? { region, endpoint, timeouts } : { region, dualStack: true, timeouts };
}

/** An S3 bucket in `region` through {@link agentAwsClientOptions} (path-style on an override). */
export function s3Bucket(
  adapters: StoreAdapters,
  env: ProcessEnv,
  location: { region: string; bucket: string },
): objectStoreLib.ObjectStore {
  return new adapters.objects.S3ObjectStore({
    client: adapters.objects.createS3Client({
      ...agentAwsClientOptions('S3', location.region, env),
      maxAttempts: AGENT_S3_MAX_ATTEMPTS,
    }),
    bucket: location.bucket,
  });
}
