import { RecordingReporter } from '@podmin/cli-util-io';
import { ProviderRegistry, type PodminConfig } from '@podmin/cli-util-config';
import { connect, disconnect, renderContexts, resolveConnect, useContext } from './connect';
import { awsConnectRules, localConnectRules } from './connect-rules';
import type { BucketPreparer, ConnectProvider } from './context.ports';

/** The built-in providers' connect rules. */
const rules = new ProviderRegistry({ aws: awsConnectRules, local: localConnectRules });

/** The local provider's connect rules with `openBucket` as its bucket. */
const localWith = (openBucket: ConnectProvider['openBucket']) =>
  new ProviderRegistry<ConnectProvider>({ local: { ...localConnectRules, openBucket } });

/** Context store fake keeping the config in memory. */
class MemoryContexts {
  config: PodminConfig = { contexts: {} };
  read() {
    return Promise.resolve(this.config);
  }
  async update(mutate: (c: PodminConfig) => PodminConfig) {
    this.config = mutate(await this.read());
    return this.config;
  }
}

const dirs = { config: '/c', cache: '/k', data: '/d', runtime: '/r' };

describe('resolveConnect', () => {
  it('defaults a local bucket under the data directory and the secrets provider', () => {
    expect(resolveConnect({ cluster: 'demo', provider: 'local' }, '/d', rules)).toEqual({
      cluster: 'demo',
      provider: 'local',
      region: 'local',
      bucket: '/d/buckets/demo',
      secretsProvider: 'aws-parameter-store',
    });
  });

  it('takes the AWS region from the environment and defaults the bucket name', () => {
    expect(
      resolveConnect(
        { cluster: 'prod', provider: 'aws', defaultRegion: 'eu-west-1', profile: 'ops' },
        '/d',
        rules,
      ),
    ).toMatchObject({
      region: 'eu-west-1',
      bucket: 'podmin-prod',
      profile: 'ops',
    });
  });

  it('lists every bad flag', () => {
    expect(() =>
      resolveConnect(
        { cluster: 'Prod!', provider: 'aws', bucket: 'Bad_Bucket', secretsProvider: 'vault' },
        '/d',
        rules,
      ),
    ).toThrow(/<cluster>[\s\S]*--secrets-provider[\s\S]*--region[\s\S]*--bucket/);
    expect(() =>
      resolveConnect(
        { cluster: 'x', provider: 'local', region: 'us-east-1', profile: 'p' },
        '/d',
        rules,
      ),
    ).toThrow(/--region[\s\S]*--profile/);
    expect(() =>
      resolveConnect(
        { cluster: 'x', provider: 'aws', region: 'us-east-1', secretsProvider: 'local' },
        '/d',
        rules,
      ),
    ).toThrow(/--secrets-provider/);
  });
});

describe('context commands', () => {
  it('saves and selects a context only after the bucket is verified', async () => {
    const contexts = new MemoryContexts();
    const reporter = new RecordingReporter();
    let deleted = 0;
    const failing: BucketPreparer = {
      ensureBucket: () => Promise.resolve({ created: true }),
      probeAccess: () => Promise.reject(new Error('write denied')),
      deleteBucket: () => Promise.resolve(void deleted++),
    };
    await expect(
      connect(
        { cluster: 'demo', provider: 'local' },
        { reporter, contexts, dirs, providers: localWith(() => Promise.resolve(failing)) },
      ),
    ).rejects.toThrow('write denied');
    expect(contexts.config.contexts).toEqual({});
    // The bucket it created is removed again.
    expect(deleted).toBe(1);

    const ok: BucketPreparer = {
      ensureBucket: () => Promise.resolve({ created: false }),
      probeAccess: () => Promise.resolve(),
      deleteBucket: () => Promise.reject(new Error('an existing bucket is never removed')),
    };
    await connect(
      { cluster: 'demo', provider: 'local' },
      { reporter, contexts, dirs, providers: localWith(() => Promise.resolve(ok)) },
    );
    expect(contexts.config.current).toBe('demo');
    expect(reporter.infos).toContain('Using existing bucket directory /d/buckets/demo');
  });

  it('reads the config before touching the bucket, so a bad config creates nothing', async () => {
    const reporter = new RecordingReporter();
    const contexts = {
      read: () => Promise.reject(new Error('config.json: not valid JSON')),
      update: () => Promise.reject(new Error('not reached')),
    };
    let opened = false;
    await expect(
      connect(
        { cluster: 'demo', provider: 'local' },
        {
          reporter,
          contexts,
          dirs,
          providers: localWith(() => {
            opened = true;
            return Promise.reject(new Error('not reached'));
          }),
        },
      ),
    ).rejects.toThrow('not valid JSON');
    expect(opened).toBe(false);
  });

  it('keeps a bucket it did not create when saving the context fails', async () => {
    const reporter = new RecordingReporter();
    let deleted = false;
    const contexts = {
      read: () => Promise.resolve({ contexts: {} }),
      update: () => Promise.reject(new Error('lock denied')),
    };
    const existing: BucketPreparer = {
      ensureBucket: () => Promise.resolve({ created: false }),
      probeAccess: () => Promise.resolve(),
      deleteBucket: () => Promise.resolve(void (deleted = true)),
    };
    await expect(
      connect(
        { cluster: 'demo', provider: 'local' },
        { reporter, contexts, dirs, providers: localWith(() => Promise.resolve(existing)) },
      ),
    ).rejects.toThrow('lock denied');
    expect(deleted).toBe(false);
  });

  it('selects, lists and forgets contexts', async () => {
    const contexts = new MemoryContexts();
    const reporter = new RecordingReporter();
    contexts.config = {
      current: 'a',
      contexts: {
        a: {
          cluster: 'a',
          provider: 'local',
          region: 'local',
          bucket: '/a',
          secretsProvider: 'local',
        },
        b: {
          cluster: 'b',
          provider: 'aws',
          region: 'us-east-1',
          bucket: 'bb-bucket',
          secretsProvider: 'aws-secrets-manager',
        },
      },
    };
    await useContext('b', { contexts, reporter });
    expect(await renderContexts({ contexts })).toMatch(
      /^\*\s+b\s+aws\s+us-east-1\s+bb-bucket\s+aws-secrets-manager$/m,
    );
    await expect(useContext('c', { contexts, reporter })).rejects.toMatchObject({
      code: 'CONTEXT_NOT_FOUND',
    });
    await disconnect('b', {
      contexts,
      reporter,
      dirs: { ...dirs, cache: '/nonexistent-podmin-cache' },
    });
    expect(contexts.config).toEqual({ contexts: { a: contexts.config.contexts['a'] } });
  });
});
