import { localAgentRules } from '@podmin/agent-util-config';
import type { AgentProvider } from './agent-provider';
import { openS3Store } from './s3-store';

/**
 * The local provider: the bucket is a directory and one file-backed secret store serves both
 * secrets-provider names; a publish destination is still S3 (in AWS_REGION, us-east-1 unset).
 */
export const localAgentProvider: AgentProvider = Object.freeze({
  ...localAgentRules,
  async openBucket(config) {
    const { LocalDirectoryObjectStore } = await import('@podmin/data-access-object-store');
    return new LocalDirectoryObjectStore(config.bucket);
  },
  openS3Bucket: (_config, env, bucket) =>
    openS3Store(env['AWS_REGION'] ?? 'us-east-1', bucket, env),
  async openSecretStores(config) {
    const { LocalSecretStore } = await import('@podmin/data-access-secrets');
    const file = config.localSecretsFile as string;
    return {
      'aws-parameter-store': new LocalSecretStore({ file, provider: 'aws-parameter-store' }),
      'aws-secrets-manager': new LocalSecretStore({ file, provider: 'aws-secrets-manager' }),
    };
  },
} satisfies AgentProvider);
