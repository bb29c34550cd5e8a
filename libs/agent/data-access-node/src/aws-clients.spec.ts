import fs from 'node:fs';
import path from 'node:path';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import {
  AGENT_AWS_TIMEOUTS,
  AGENT_S3_MAX_ATTEMPTS,
  type AgentProvider,
  type ProcessEnv,
  type StoreAdapters,
} from './agent-provider';
import { awsAgentProvider } from './aws.provider';
import { localAgentProvider } from './local.provider';
import { openBucketStore, openS3Bucket, openSecretStores, STORE_ADAPTERS } from './open';
import { AGENT_PROVIDERS } from './registry';

const awsFlags = [
  ...['--provider', 'aws', '--bucket', 'podmin-demo', '--region', 'us-east-1'],
  ...['--cluster', 'demo', '--nodegroup', 'default', '--ipv6-prefix', '2600:1f14:abc:1200:1::/80'],
];

/** What the tests need of an SDK v3 client: its middleware stack, config and `destroy`. */
interface SdkClient {
  middlewareStack: {
    add(
      mw: (next: unknown) => (args: { request: { hostname?: string } }) => Promise<never>,
      options: { step: 'build'; name: string },
    ): void;
  };
  config: { useDualstackEndpoint(): Promise<boolean> };
  destroy(): void;
}

/** The SDK client an S3 or secret store sends with. */
const clientOf = (store: unknown): SdkClient => (store as { client: SdkClient }).client;

/**
 * The host a store's SDK client would send its next request to: a build-step middleware (after
 * endpoint resolution and serialization, before signing and any network I/O) records it and
 * stops the request there.
 */
async function hostOf(store: unknown, call: () => Promise<unknown>): Promise<string | undefined> {
  const client = clientOf(store);
  let host: string | undefined;
  client.middlewareStack.add(
    () => (args) => {
      host = args.request.hostname;
      return Promise.reject(new Error('stopped before sending'));
    },
    { step: 'build', name: 'recordHost' },
  );
  await call().catch(() => undefined);
  client.destroy();
  return host;
}

describe("the agent's AWS clients", () => {
  const saved = { ...process.env };
  beforeAll(() => {
    // Requests resolve credentials before they are built: static ones, never IMDS or files.
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIATEST',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
    for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL'])
      delete process.env[name];
  });
  afterAll(() => {
    process.env = saved;
  });
  const config = parseAgentProcessConfig(awsFlags, {}, AGENT_PROVIDERS);

  it('send S3 requests to the regional dual-stack endpoint (bucket and publish bucket)', async () => {
    const bucket = openBucketStore(config, {});
    expect(await hostOf(bucket, () => bucket.get('deployments/index.json'))).toBe(
      'podmin-demo.s3.dualstack.us-east-1.amazonaws.com',
    );
    const publish = openS3Bucket(config, {}, 'ca-publish');
    expect(await hostOf(publish, () => publish.get('ca.pem'))).toBe(
      'ca-publish.s3.dualstack.us-east-1.amazonaws.com',
    );
  });

  it('send SSM requests to its dual-stack endpoint (ssm.<region>.api.aws)', async () => {
    const store = openSecretStores(config, {})['aws-parameter-store'];
    expect(await hostOf(store, () => store.get('/demo/_system/cluster-ca'))).toBe(
      'ssm.us-east-1.api.aws',
    );
  });

  it('ask Secrets Manager for its dual-stack endpoint, which the SDK resolves to the standard host', async () => {
    const store = openSecretStores(config, {})['aws-secrets-manager'];
    expect(await clientOf(store).config.useDualstackEndpoint()).toBe(true);
    // Secrets Manager's standard endpoints are dual-stack in the aws partition, so the SDK's
    // rules map UseDualStack there (other partitions get a dualStackDnsSuffix host).
    expect(await hostOf(store, () => store.get('/demo/web/app/db'))).toBe(
      'secretsmanager.us-east-1.amazonaws.com',
    );
  });

  it('use an AWS_ENDPOINT_URL_* override (an emulator) instead of the dual-stack endpoint', async () => {
    const env = {
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:4566',
      AWS_ENDPOINT_URL: 'http://127.0.0.2:4566',
    };
    const bucket = openBucketStore(config, env);
    expect(await clientOf(bucket).config.useDualstackEndpoint()).toBe(false);
    expect(await hostOf(bucket, () => bucket.get('x'))).toBe('127.0.0.1');
    const ssm = openSecretStores(config, env)['aws-parameter-store'];
    expect(await hostOf(ssm, () => ssm.get('/demo/_system/cluster-ca'))).toBe('127.0.0.2');
  });

  it('are all built through agentAwsClientOptions, dual-stack unless overridden', () => {
    // Every client factory the openers hand a provider, wrapped to record its options: a
    // factory added to STORE_ADAPTERS that no opener calls, or that one calls without
    // dual-stack, fails here.
    const calls = new Map<string, unknown[]>();
    const record = <T extends object>(group: T): T =>
      Object.fromEntries(
        Object.entries(group).map(([name, value]) => [
          name,
          name.startsWith('create') && typeof value === 'function'
            ? (options: unknown) => {
                calls.set(name, [...(calls.get(name) ?? []), options]);
                return (value as (o: unknown) => unknown)(options);
              }
            : value,
        ]),
      ) as T;
    const adapters: StoreAdapters = {
      objects: record(STORE_ADAPTERS.objects),
      secrets: record(STORE_ADAPTERS.secrets),
    };
    const factories = [
      ...Object.keys(STORE_ADAPTERS.objects),
      ...Object.keys(STORE_ADAPTERS.secrets),
    ].filter((name) => name.startsWith('create'));
    expect(factories.sort()).toEqual([
      'createS3Client',
      'createSecretsManagerClient',
      'createSsmClient',
    ]);
    const openAll = (provider: AgentProvider, env: ProcessEnv): void => {
      const opened = [
        provider.openBucket(config, env, adapters),
        provider.openS3Bucket(config, env, 'ca-publish', adapters),
        ...Object.values(provider.openSecretStores(config, env, adapters)),
      ];
      for (const store of opened) if ('client' in (store as object)) clientOf(store).destroy();
    };
    openAll(awsAgentProvider, {});
    expect([...calls.keys()].sort()).toEqual(factories);
    for (const [name, list] of calls)
      for (const options of list)
        expect({ name, options }).toEqual({
          name,
          options: {
            region: 'us-east-1',
            dualStack: true,
            timeouts: AGENT_AWS_TIMEOUTS,
            ...(name === 'createS3Client' ? { maxAttempts: AGENT_S3_MAX_ATTEMPTS } : {}),
          },
        });
    calls.clear();
    // The local provider's publish bucket is S3 too.
    const localConfig = { ...config, provider: 'local', bucket: '/srv/bucket' };
    localAgentProvider.openS3Bucket(localConfig, { AWS_REGION: 'eu-west-1' }, 'p', adapters);
    expect(calls.get('createS3Client')).toEqual([
      {
        region: 'eu-west-1',
        dualStack: true,
        timeouts: AGENT_AWS_TIMEOUTS,
        maxAttempts: AGENT_S3_MAX_ATTEMPTS,
      },
    ]);
  });

  it('are built nowhere else in the agent: no agent source outside the openers constructs one', () => {
    const root = path.resolve(__dirname, '../../../..');
    const dirs = [
      ...fs.readdirSync(path.join(root, 'libs/agent')).map((d) => path.join('libs/agent', d)),
      ...fs
        .readdirSync(path.join(root, 'apps'))
        .filter((d) => d === 'agent' || d.startsWith('agent-'))
        .map((d) => path.join('apps', d)),
    ];
    // This library's providers are the openers; the test above checks every client they build.
    const allowed = 'libs/agent/data-access-node/';
    // Fluent Bit's start (`podmin-agent otel-logs-config`) builds its one secret store itself,
    // from agentAwsClientOptions (injected, checked below): it is loaded only for that command,
    // and taking the openers would make the supervisor evaluate every store adapter at start.
    const oneShot = 'libs/agent/feature-supervisor/src/otel-logs-config.ts';
    const client =
      /@aws-sdk\/|\bnew\s+(S3|SSM|SecretsManager|EC2|STS)Client\b|\bcreate(S3|Ssm|SecretsManager)Client\s*\(/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!['__fixtures__', 'generated', 'node_modules'].includes(entry.name)) walk(rel);
        } else if (
          /\.ts$/.test(entry.name) &&
          !/\.(spec|integration-spec|node-spec|chaos-spec)\.ts$/.test(entry.name)
        ) {
          const text = fs.readFileSync(path.join(root, rel), 'utf8');
          if (rel === oneShot) {
            // Every client it makes takes its options from agentAwsClientOptions.
            const made = text.match(/\bcreate(S3|Ssm|SecretsManager)Client\s*\(/g) ?? [];
            const throughOptions =
              text.match(/\bcreate(S3|Ssm|SecretsManager)Client\(awsClientOptions\(/g) ?? [];
            expect([rel, made.length]).toEqual([rel, throughOptions.length]);
            expect(made.length).toBeGreaterThan(0);
          } else if (!rel.startsWith(allowed) && client.test(text)) offenders.push(rel);
        }
      }
    };
    for (const dir of dirs)
      if (fs.existsSync(path.join(root, dir, 'src'))) walk(path.join(dir, 'src'));
    expect(dirs.length).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
  });
});
