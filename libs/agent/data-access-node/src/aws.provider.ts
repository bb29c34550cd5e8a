import { awsAgentRules } from '@podmin/agent-util-config';
import { agentAwsClientOptions, s3Bucket, type AgentProvider } from './agent-provider';

/**
 * The aws provider: the bucket in S3, secrets in SSM Parameter Store and Secrets Manager, every
 * client on its regional dual-stack endpoint (nodes have no IPv4) or on its AWS_ENDPOINT_URL_*
 * override, through {@link agentAwsClientOptions}.
 */
export const awsAgentProvider: AgentProvider = Object.freeze({
  ...awsAgentRules,
  openBucket: (config, env, adapters) =>
    s3Bucket(adapters, env, { region: config.region, bucket: config.bucket }),
  openS3Bucket: (config, env, bucket, adapters) =>
    s3Bucket(adapters, env, { region: config.region, bucket }),
  openSecretStores: (config, env, { secrets }) => ({
    'aws-parameter-store': new secrets.ParameterStoreSecretStore(
      secrets.createSsmClient(agentAwsClientOptions('SSM', config.region, env)),
    ),
    'aws-secrets-manager': new secrets.SecretsManagerSecretStore(
      secrets.createSecretsManagerClient(
        agentAwsClientOptions('SECRETS_MANAGER', config.region, env),
      ),
    ),
  }),
} satisfies AgentProvider);
