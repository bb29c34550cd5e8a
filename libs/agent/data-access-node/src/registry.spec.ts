import path from 'node:path';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import { InMemoryObjectStore, useTempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { ProviderRegistry } from '@podmin/util-names';
import type { AgentProvider } from './agent-provider';
import { awsAgentProvider } from './aws.provider';
import { localAgentProvider } from './local.provider';
import { openBucketStore, openS3Bucket, openSecretStores } from './open';
import { AGENT_PROVIDERS, agentProviderOf } from './registry';

/**
 * A third provider kept in memory: `mem-*` buckets, region `memory`, a fixed node identity and a
 * secrets file of its own (kept as the local provider keeps it). It goes through the same seam as aws and local.
 */
function memoryProvider(buckets: Map<string, InMemoryObjectStore>, secrets: string): AgentProvider {
  const bucket = (name: string) => {
    const store = buckets.get(name);
    if (!store) throw new PodminError('OBJECT_NOT_FOUND', `no memory bucket ${name}`);
    return store;
  };
  return {
    checkBucket: (name) => (name.startsWith('mem-') ? undefined : 'must start with mem-'),
    checkRegion: (region) => (region === 'memory' ? undefined : 'must be memory'),
    allowsUniqueLocalPrefix: true,
    nodeRoot: { default: '/mem/node' },
    defaultSecretsFile: () => secrets,
    defaultNodeAddress: () => 'fd00::7',
    defaultNodeId: () => 'mem-node',
    dataplaneOnHostInterfaces: false,
    openBucket: (config) => bucket(config.bucket),
    openS3Bucket: (_config, _env, name) => bucket(name),
    // Secrets in the node's file, as the local provider keeps them.
    openSecretStores: (config, env, adapters) =>
      localAgentProvider.openSecretStores(config, env, adapters),
  };
}

const memoryFlags = [
  ...['--provider', 'memory', '--bucket', 'mem-demo', '--region', 'memory'],
  ...['--cluster', 'demo', '--nodegroup', 'default', '--ipv6-prefix', 'fd00:1:2:3:4::/80'],
];

describe('the agent provider seam', () => {
  const dir = useTempDir('podmin-agent-seam');

  it('registers a third provider and reads config, bucket and secrets through it', async () => {
    const bucket = new InMemoryObjectStore();
    const published = new InMemoryObjectStore();
    await bucket.put('desired/index.json', '{"pods":[]}');
    const providers = new ProviderRegistry<AgentProvider>({
      aws: awsAgentProvider,
      local: localAgentProvider,
      memory: memoryProvider(
        new Map([
          ['mem-demo', bucket],
          ['mem-publish', published],
        ]),
        path.join(dir(), 'secrets.json'),
      ),
    });
    const config = parseAgentProcessConfig(memoryFlags, {}, providers);
    expect(config).toMatchObject({
      provider: 'memory',
      nodeRoot: '/mem/node',
      nodeAddress: 'fd00::7',
      nodeId: 'mem-node',
      localSecretsFile: path.join(dir(), 'secrets.json'),
    });
    expect(agentProviderOf(config, providers).dataplaneOnHostInterfaces).toBe(false);

    const store = openBucketStore(config, {}, providers);
    expect(store).toBe(bucket);
    expect((await store.get('desired/index.json')).body.toString()).toBe('{"pods":[]}');
    await openS3Bucket(config, {}, 'mem-publish', providers).put('ca.pem', 'pem');
    expect(published.objects.has('ca.pem')).toBe(true);

    const stores = openSecretStores(config, {}, providers);
    await stores['aws-parameter-store'].create('/demo/_system/x', Buffer.from('v'));
    expect((await stores['aws-parameter-store'].get('/demo/_system/x')).toString()).toBe('v');

    // The built-in registry does not know it: the name is a problem naming the known ones.
    expect(() => parseAgentProcessConfig(memoryFlags, {}, AGENT_PROVIDERS)).toThrow(
      /--provider: must be aws or local/,
    );
  });

  it('refuses an unknown provider with INVALID_ARGUMENT naming the known ones', () => {
    const config = parseAgentProcessConfig(
      memoryFlags,
      {},
      new ProviderRegistry({ memory: memoryProvider(new Map(), '/s.json') }),
    );
    let caught: unknown;
    try {
      openBucketStore(config, {});
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PodminError);
    expect((caught as PodminError).code).toBe('INVALID_ARGUMENT');
    expect((caught as PodminError).message).toBe(
      'opening the node provider: unknown provider "memory"; known providers: aws, local',
    );
  });

  it('holds aws and local with their own node rules', () => {
    expect(AGENT_PROVIDERS.names).toEqual(['aws', 'local']);
    expect(AGENT_PROVIDERS.get('aws').dataplaneOnHostInterfaces).toBe(true);
    expect(AGENT_PROVIDERS.get('local').dataplaneOnHostInterfaces).toBe(false);
    expect(AGENT_PROVIDERS.get('aws').allowsUniqueLocalPrefix).toBe(false);
    expect(AGENT_PROVIDERS.get('local').allowsUniqueLocalPrefix).toBe(true);
  });
});
