import type { AgentProcessConfig } from '@podmin/agent-util-config';
import {
  createS3Client,
  openObjectStore,
  S3ObjectStore,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import {
  createSecretsManagerClient,
  createSsmClient,
  LocalSecretStore,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
  type SecretStore,
  type SecretStoresByProvider,
} from '@podmin/data-access-secrets';

/** Process environment (endpoint overrides for emulators). */
export type ProcessEnv = Readonly<Record<string, string | undefined>>;

/**
 * The cluster bucket of this node, opened the same way by every agent process: a directory
 * (local) or S3 on the regional dual-stack endpoint (aws; nodes have no IPv4), or on
 * AWS_ENDPOINT_URL_S3 with path-style addressing.
 */
export function openBucketStore(config: AgentProcessConfig, env: ProcessEnv): ObjectStore {
  const { provider, bucket, region } = config;
  const endpoint = env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  return openObjectStore({ provider, bucket, region, endpoint, dualStack: true });
}

/** Another S3 bucket in the node's region (e.g. the `--workload-ca-publish` destination). */
export function openS3Bucket(
  config: AgentProcessConfig,
  env: ProcessEnv,
  bucket: string,
): ObjectStore {
  const endpoint = env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  const region = config.provider === 'aws' ? config.region : (env['AWS_REGION'] ?? 'us-east-1');
  return new S3ObjectStore({
    client: createS3Client({ region, ...(endpoint ? { endpoint } : {}) }),
    bucket,
  });
}

/** The secret stores of this node by provider name; the local provider's file store serves both. */
export function openSecretStores(
  config: AgentProcessConfig,
  env: ProcessEnv,
): Required<{ [K in keyof SecretStoresByProvider]: SecretStore }> {
  if (config.provider === 'local') {
    const file = config.localSecretsFile as string;
    return {
      'aws-parameter-store': new LocalSecretStore({ file, provider: 'aws-parameter-store' }),
      'aws-secrets-manager': new LocalSecretStore({ file, provider: 'aws-secrets-manager' }),
    };
  }
  const ssm = env['AWS_ENDPOINT_URL_SSM'] ?? env['AWS_ENDPOINT_URL'];
  const sm = env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ?? env['AWS_ENDPOINT_URL'];
  return {
    'aws-parameter-store': new ParameterStoreSecretStore(
      createSsmClient({ region: config.region, ...(ssm ? { endpoint: ssm } : {}) }),
    ),
    'aws-secrets-manager': new SecretsManagerSecretStore(
      createSecretsManagerClient({ region: config.region, ...(sm ? { endpoint: sm } : {}) }),
    ),
  };
}
