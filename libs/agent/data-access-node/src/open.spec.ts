import type { S3Client } from '@aws-sdk/client-s3';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import { awsAgentArgs, localAgentFlags } from '@podmin/testing';
import { openBucketStore, openSecretStores } from './open';
import { AGENT_PROVIDERS } from './registry';

const flags = (provider: 'aws' | 'local') =>
  provider === 'local' ? localAgentFlags : awsAgentArgs('podmin-demo', 'eu-west-1', 'demo');

describe('openBucketStore / openSecretStores', () => {
  it('uses the directory store and one local secrets file for both providers locally', () => {
    const config = parseAgentProcessConfig(
      flags('local'),
      { PODMIN_NODE_ROOT: '/srv/node', PODMIN_LOCAL_SECRETS_FILE: '/srv/secrets.json' },
      AGENT_PROVIDERS,
    );
    expect(openBucketStore(config, {}).constructor.name).toBe('LocalDirectoryObjectStore');
    const stores = openSecretStores(config, {});
    expect(stores['aws-parameter-store'].provider).toBe('aws-parameter-store');
    expect(stores['aws-secrets-manager'].provider).toBe('aws-secrets-manager');
    expect(stores['aws-parameter-store'].constructor.name).toBe('LocalSecretStore');
  });

  it('uses S3, SSM and Secrets Manager on aws', () => {
    const config = parseAgentProcessConfig(flags('aws'), {}, AGENT_PROVIDERS);
    expect(
      openBucketStore(config, { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1' }).constructor.name,
    ).toBe('S3ObjectStore');
    const stores = openSecretStores(config, {});
    expect(stores['aws-parameter-store'].constructor.name).toBe('ParameterStoreSecretStore');
    expect(stores['aws-secrets-manager'].constructor.name).toBe('SecretsManagerSecretStore');
  });
});

describe('openBucketStore on aws', () => {
  const config = parseAgentProcessConfig(flags('aws'), {}, AGENT_PROVIDERS);
  /** The S3 client inside a store. */
  const clientOf = (store: unknown): S3Client => (store as { client: S3Client }).client;

  it('uses the regional dual-stack endpoint', async () => {
    const client = clientOf(openBucketStore(config, {}));
    try {
      expect(await client.config.useDualstackEndpoint()).toBe(true);
      expect(await client.config.region()).toBe('eu-west-1');
    } finally {
      client.destroy();
    }
  });

  it('uses AWS_ENDPOINT_URL_S3 with path-style addressing instead', async () => {
    const client = clientOf(
      openBucketStore(config, { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:4566' }),
    );
    try {
      expect(await client.config.useDualstackEndpoint()).toBe(false);
      expect(client.config.forcePathStyle).toBe(true);
      expect(await client.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    } finally {
      client.destroy();
    }
  });
});
