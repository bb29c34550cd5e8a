import { awsAgentRules } from '@podmin/agent-util-config';
import { agentAwsClientOptions, s3Bucket, type AgentProvider } from './agent-provider';
import { IMDS_ENDPOINT_VARIABLE, IMDS_IPV6_ENDPOINT, readNodeFacts } from './imds';

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
  async startEnvironment(env) {
    const facts: Record<string, string> = {};
    // The SDK's credential provider would ask the IPv4 169.254.169.254, which an IPv6-only
    // node cannot reach.
    if (!env[IMDS_ENDPOINT_VARIABLE] && !env['AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE'])
      facts['AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE'] = 'IPv6';
    // The node ID is the instance ID, which the role's receipt grant names (infra/aws iam.tf),
    // whatever the host name says.
    if (!env['PODMIN_NODE_ADDRESS'] || !env['PODMIN_NODE_ID']) {
      const node = await readNodeFacts({
        endpoint: env[IMDS_ENDPOINT_VARIABLE] || IMDS_IPV6_ENDPOINT,
      });
      if (!env['PODMIN_NODE_ADDRESS']) facts['PODMIN_NODE_ADDRESS'] = node.address;
      if (!env['PODMIN_NODE_ID']) facts['PODMIN_NODE_ID'] = node.instanceId;
    }
    return facts;
  },
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
