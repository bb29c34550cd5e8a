import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { InMemoryObjectStore } from '@podmin/testing';
import type { SecretStore } from '@podmin/data-access-secrets';
import {
  BUILTIN_PROVIDERS,
  type CliProviderFactory,
  type SetupRequest,
} from '@podmin/cli-providers';
import { run } from './cli';
import { createCliContext } from './cli-context';
import { deployWebArgs } from './__fixtures__/deploy-args';

/** What the in-memory provider was asked to do, in order. */
interface MemoryCalls {
  lifecycle: string[];
  setups: SetupRequest[];
}

/**
 * A third provider kept entirely in memory: one bucket per cluster, no secret stores, and a
 * lifecycle that records its calls. It goes through the same seam as aws and local.
 */
function memoryProvider(calls: MemoryCalls): CliProviderFactory {
  const buckets = new Map<string, InMemoryObjectStore>();
  return (ctx) => ({
    connect: () =>
      Promise.resolve({
        resolveLocation(options, _dataDir, problems) {
          if (options.profile !== undefined)
            problems.push({ field: '--profile', message: 'the memory provider has no profiles' });
          return { region: 'memory', bucket: options.bucket ?? `mem-${options.cluster}` };
        },
        describeBucket: (location) => `memory bucket ${location.bucket}`,
        openBucket: (location) =>
          Promise.resolve({
            ensureBucket() {
              const created = !buckets.has(location.bucket);
              if (created) buckets.set(location.bucket, new InMemoryObjectStore());
              return Promise.resolve({ created });
            },
            probeAccess: () => Promise.resolve(),
            deleteBucket: () => Promise.resolve(void buckets.delete(location.bucket)),
          }),
      }),
    openObjectStore: (context) => {
      const store = buckets.get(context.bucket);
      return store
        ? Promise.resolve(store)
        : Promise.reject(new Error(`no memory bucket ${context.bucket}`));
    },
    secretStores: () => () => Promise.reject<SecretStore>(new Error('no secrets in memory')),
    lifecycle: (context) => ({
      setup(request) {
        calls.lifecycle.push(`setup ${context.cluster}`);
        calls.setups.push(request);
        ctx.reporter.result(`memory:${context.cluster}`);
        return Promise.resolve();
      },
      teardown() {
        calls.lifecycle.push(`teardown ${context.cluster}`);
        return Promise.resolve();
      },
      destroy() {
        calls.lifecycle.push(`destroy ${context.cluster}`);
        return Promise.resolve();
      },
    }),
  });
}

describe('the CLI provider seam', () => {
  let home: string;
  let reporter: RecordingReporter;
  const env = () => ({
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'c'),
    XDG_DATA_HOME: path.join(home, 'd'),
    XDG_CACHE_HOME: path.join(home, 'k'),
  });
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-seam-'));
    reporter = new RecordingReporter();
  });
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it('runs connect, deploy, list, setup and teardown on a registered in-memory provider', async () => {
    const calls: MemoryCalls = { lifecycle: [], setups: [] };
    const ctx = createCliContext(reporter, env(), {
      ...BUILTIN_PROVIDERS,
      memory: memoryProvider(calls),
    });
    expect(ctx.providers.names).toEqual(['aws', 'local', 'memory']);
    expect(await run(['connect', 'demo', '--provider', 'memory'], ctx)).toBe(0);
    expect(reporter.infos).toContain('Created bucket memory bucket mem-demo');
    expect(await ctx.contexts.current()).toMatchObject({
      cluster: 'demo',
      provider: 'memory',
      region: 'memory',
      bucket: 'mem-demo',
    });
    // No secret stores in memory, so no trust list to read: the deploy signs with a local key.
    expect(await run(['trust', 'keygen'], ctx)).toBe(0);
    reporter.results.length = 0;
    expect(await run(deployWebArgs('hello:v1'), ctx)).toBe(0);
    expect(reporter.results).toEqual(['default/web']);
    expect(await run(['list', '-o', 'json'], ctx)).toBe(0);
    expect(JSON.parse(reporter.results[1] as string)).toEqual([
      expect.objectContaining({ name: 'web', nodegroup: 'default', service: null }),
    ]);
    expect(await run(['setup', '-g', 'workers', '-y'], ctx)).toBe(0);
    expect(calls.setups).toEqual([{ nodegroups: ['workers'], assumeYes: true }]);
    expect(reporter.results[2]).toBe('memory:demo');
    expect(await run(['teardown', '-y'], ctx)).toBe(0);
    expect(calls.lifecycle).toEqual(['setup demo', 'teardown demo']);
    // Nothing was written where the built-in providers keep their state.
    expect(fs.existsSync(path.join(home, 'd', 'podmin', 'buckets'))).toBe(false);
  });

  it('checks --otel-logs as an invocation error before the provider runs, then hands it over', async () => {
    const calls: MemoryCalls = { lifecycle: [], setups: [] };
    const ctx = createCliContext(reporter, env(), {
      ...BUILTIN_PROVIDERS,
      memory: memoryProvider(calls),
    });
    expect(await run(['connect', 'demo', '--provider', 'memory'], ctx)).toBe(0);
    const bad = 'endpoint=http://otlp.example.com/v1/logs,protocol=udp,color=red';
    expect(await run(['setup', '-y', '--otel-logs', bad], ctx)).toBe(2);
    const shown = reporter.infos.join('\n');
    expect(shown).toContain('--otel-logs: unknown key "color"');
    expect(shown).toContain('--otel-logs protocol: "udp" is not allowed; use http');
    expect(shown).toContain(
      '--otel-logs endpoint: "http://otlp.example.com/v1/logs" is not an https:// URL',
    );
    expect(calls.setups).toEqual([]);
    const good = 'endpoint=https://otlp.example.com/v1/logs,mtls=true';
    expect(await run(['setup', '-y', '--otel-logs', good], ctx)).toBe(0);
    expect(calls.setups).toEqual([{ otelLogs: good, assumeYes: true }]);
  });

  it('refuses --otel-logs on the local provider, whose node has no log collector', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    expect(
      await run(['setup', '-y', '--otel-logs', 'endpoint=https://otlp.example.com/v1/logs'], ctx),
    ).toBe(1);
    expect(reporter.infos.join('\n')).toContain(
      '--otel-logs is for AWS clusters, whose nodes install and run Fluent Bit; a local node has no log collector',
    );
  });

  it('refuses a context naming an unknown provider, listing the known ones', async () => {
    const ctx = createCliContext(reporter, env());
    const context = {
      cluster: 'demo',
      provider: 'gcp',
      region: 'europe-west1',
      bucket: 'b',
      secretsProvider: 'aws-parameter-store' as const,
    };
    expect(() => ctx.provider(context)).toThrow(
      'using cluster demo: unknown provider "gcp"; known providers: aws, local',
    );
    expect(await run(['connect', 'demo', '--provider', 'gcp'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toMatch(/Choices: "aws", "local"/);
  });
});
