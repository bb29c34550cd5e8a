import type { AgentProcessConfig } from '@podmin/agent-util-config';
import {
  createS3Client,
  LocalDirectoryObjectStore,
  S3ObjectStore,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import {
  createSecretsManagerClient,
  createSsmClient,
  LocalSecretStore,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
} from '@podmin/data-access-secrets';
import type { NodeSecretStores, ProcessEnv, StoreAdapters } from './agent-provider';
import { agentProviderOf, AGENT_PROVIDERS, type AgentProviders } from './registry';

/** The store adapters every provider builds from (this module is the only one importing them). */
export const STORE_ADAPTERS: StoreAdapters = Object.freeze({
  objects: { LocalDirectoryObjectStore, S3ObjectStore, createS3Client },
  secrets: {
    LocalSecretStore,
    ParameterStoreSecretStore,
    SecretsManagerSecretStore,
    createSsmClient,
    createSecretsManagerClient,
  },
});

/**
 * The cluster bucket of this node, opened the same way by every agent process through its
 * provider: a directory (local) or S3 on the regional dual-stack endpoint (aws; nodes have no
 * IPv4), or on AWS_ENDPOINT_URL_S3 with path-style addressing.
 */
export function openBucketStore(
  config: AgentProcessConfig,
  env: ProcessEnv,
  providers: AgentProviders = AGENT_PROVIDERS,
): ObjectStore {
  return agentProviderOf(config, providers).openBucket(config, env, STORE_ADAPTERS);
}

/** Another S3 bucket the node writes to (e.g. the `--workload-ca-publish` destination). */
export function openS3Bucket(
  config: AgentProcessConfig,
  env: ProcessEnv,
  bucket: string,
  providers: AgentProviders = AGENT_PROVIDERS,
): ObjectStore {
  return agentProviderOf(config, providers).openS3Bucket(config, env, bucket, STORE_ADAPTERS);
}

/** The secret stores of this node by provider name; the local provider's file store serves both. */
export function openSecretStores(
  config: AgentProcessConfig,
  env: ProcessEnv,
  providers: AgentProviders = AGENT_PROVIDERS,
): NodeSecretStores {
  return agentProviderOf(config, providers).openSecretStores(config, env, STORE_ADAPTERS);
}
