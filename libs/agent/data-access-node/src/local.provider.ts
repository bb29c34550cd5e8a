import { localAgentRules } from '@podmin/agent-util-config';
import { s3Bucket, type AgentProvider } from './agent-provider';

/**
 * The local provider: the bucket is a directory and one file-backed secret store serves both
 * secrets-provider names; a publish destination is still S3 (in AWS_REGION, us-east-1 unset).
 */
export const localAgentProvider: AgentProvider = Object.freeze({
  ...localAgentRules,
  openBucket: (config, _env, { objects }) => new objects.LocalDirectoryObjectStore(config.bucket),
  openS3Bucket: (_config, env, bucket, adapters) =>
    s3Bucket(adapters, env, { region: env['AWS_REGION'] ?? 'us-east-1', bucket }),
  openSecretStores(config, _env, { secrets }) {
    const file = config.localSecretsFile as string;
    return {
      'aws-parameter-store': new secrets.LocalSecretStore({
        file,
        provider: 'aws-parameter-store',
      }),
      'aws-secrets-manager': new secrets.LocalSecretStore({
        file,
        provider: 'aws-secrets-manager',
      }),
    };
  },
} satisfies AgentProvider);
