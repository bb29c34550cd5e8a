import { awsAgentRules } from '@podmin/agent-util-config';
import { s3Bucket, type AgentProvider } from './agent-provider';

/**
 * The aws provider: the bucket in S3 on the regional dual-stack endpoint (nodes have no IPv4),
 * secrets in SSM Parameter Store and Secrets Manager, each on its AWS_ENDPOINT_URL_* override
 * when one is set.
 */
export const awsAgentProvider: AgentProvider = Object.freeze({
  ...awsAgentRules,
  openBucket: (config, env, adapters) =>
    s3Bucket(adapters, env, { region: config.region, bucket: config.bucket, dualStack: true }),
  openS3Bucket: (config, env, bucket, adapters) =>
    s3Bucket(adapters, env, { region: config.region, bucket }),
  openSecretStores(config, env, { secrets }) {
    const ssm = env['AWS_ENDPOINT_URL_SSM'] ?? env['AWS_ENDPOINT_URL'];
    const sm = env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ?? env['AWS_ENDPOINT_URL'];
    return {
      'aws-parameter-store': new secrets.ParameterStoreSecretStore(
        secrets.createSsmClient({ region: config.region, ...(ssm ? { endpoint: ssm } : {}) }),
      ),
      'aws-secrets-manager': new secrets.SecretsManagerSecretStore(
        secrets.createSecretsManagerClient({
          region: config.region,
          ...(sm ? { endpoint: sm } : {}),
        }),
      ),
    };
  },
} satisfies AgentProvider);
