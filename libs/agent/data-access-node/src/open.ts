import type { AgentProcessConfig } from '@podmin/agent-util-config';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { NodeSecretStores, ProcessEnv } from './agent-provider';
import { agentProviderOf, AGENT_PROVIDERS, type AgentProviders } from './registry';

/**
 * The cluster bucket of this node, opened the same way by every agent process through its
 * provider: a directory (local) or S3 on the regional dual-stack endpoint (aws; nodes have no
 * IPv4), or on AWS_ENDPOINT_URL_S3 with path-style addressing.
 */
export async function openBucketStore(
  config: AgentProcessConfig,
  env: ProcessEnv,
  providers: AgentProviders = AGENT_PROVIDERS,
): Promise<ObjectStore> {
  return await agentProviderOf(config, providers).openBucket(config, env);
}

/** Another S3 bucket the node writes to (e.g. the `--workload-ca-publish` destination). */
export async function openS3Bucket(
  config: AgentProcessConfig,
  env: ProcessEnv,
  bucket: string,
  providers: AgentProviders = AGENT_PROVIDERS,
): Promise<ObjectStore> {
  return await agentProviderOf(config, providers).openS3Bucket(config, env, bucket);
}

/** The secret stores of this node by provider name; the local provider's file store serves both. */
export async function openSecretStores(
  config: AgentProcessConfig,
  env: ProcessEnv,
  providers: AgentProviders = AGENT_PROVIDERS,
): Promise<NodeSecretStores> {
  return await agentProviderOf(config, providers).openSecretStores(config, env);
}
