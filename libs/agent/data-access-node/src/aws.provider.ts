import { awsAgentRules } from '@podmin/agent-util-config';
import type { AgentProvider } from './agent-provider';
import { openS3Store } from './s3-store';

/**
 * The aws provider: the bucket in S3 on the regional dual-stack endpoint (nodes have no IPv4),
 * secrets in SSM Parameter Store and Secrets Manager, each on its AWS_ENDPOINT_URL_* override
 * when one is set.
 */
export const awsAgentProvider: AgentProvider = Object.freeze({
  ...awsAgentRules,
  openBucket: (config, env) => openS3Store(config.region, config.bucket, env, true),
  openS3Bucket: (config, env, bucket) => openS3Store(config.region, bucket, env),
  async openSecretStores(config, env) {
    const lib = await import('@podmin/data-access-secrets');
    const ssm = env['AWS_ENDPOINT_URL_SSM'] ?? env['AWS_ENDPOINT_URL'];
    const sm = env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ?? env['AWS_ENDPOINT_URL'];
    return {
      'aws-parameter-store': new lib.ParameterStoreSecretStore(
        lib.createSsmClient({ region: config.region, ...(ssm ? { endpoint: ssm } : {}) }),
      ),
      'aws-secrets-manager': new lib.SecretsManagerSecretStore(
        lib.createSecretsManagerClient({ region: config.region, ...(sm ? { endpoint: sm } : {}) }),
      ),
    };
  },
} satisfies AgentProvider);
