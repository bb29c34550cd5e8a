import type { AgentProcessConfig, AgentProviderRules } from '@podmin/agent-util-config';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { SecretStore, SecretStoresByProvider } from '@podmin/data-access-secrets';

/** Process environment (endpoint overrides for emulators). */
export type ProcessEnv = Readonly<Record<string, string | undefined>>;

/** A node's secret stores, one for every secrets-provider name. */
export type NodeSecretStores = Required<{ [K in keyof SecretStoresByProvider]: SecretStore }>;

/**
 * Everything the agent's processes ask of a provider (aws, local, and later e.g. Google Cloud):
 * its configuration rules and node identity, and its stores opened with its endpoint settings.
 * The openers load their SDKs on first use, so processes that only parse flags (the supervisor,
 * agent-dns, agent-dataplane) never load them.
 */
export interface AgentProvider extends AgentProviderRules {
  /** Opens the node's cluster bucket. */
  openBucket(config: AgentProcessConfig, env: ProcessEnv): Promise<ObjectStore>;
  /** Opens another S3 bucket the node writes to (the `--workload-ca-publish` destination). */
  openS3Bucket(config: AgentProcessConfig, env: ProcessEnv, bucket: string): Promise<ObjectStore>;
  /** Opens the node's secret stores by secrets-provider name. */
  openSecretStores(config: AgentProcessConfig, env: ProcessEnv): Promise<NodeSecretStores>;
}
