import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import type { ClusterContext, ContextStore } from '@podmin/cli-util-config';
import { InMemoryObjectStore } from '@podmin/testing';
import type { ModuleVars } from '@podmin/cli-util-infra';
import { awsLogGuidance, awsProvider } from './aws.provider';
import type { ProviderShell } from './cli-provider';
import { localProvider } from './local.provider';

const shell = (podLogDir?: string): ProviderShell => ({
  reporter: new RecordingReporter(),
  dirs: { config: '/c', cache: '/k', data: '/data', runtime: '/r' },
  env: podLogDir === undefined ? {} : { podLogDir },
  contexts: {} as ContextStore,
  openBucket: () => Promise.reject(new Error('unused')),
  secretStores: () => () => Promise.reject(new Error('unused')),
  imageStore: () => Promise.reject(new Error('unused')),
});
const context = { cluster: 'demo', provider: 'local' } as ClusterContext;

describe('where podmin logs reads container logs', () => {
  it('local: this machine is the node, named after its node root, with kubelet’s log directory', async () => {
    const access = await localProvider(shell()).containerLogs?.(context, 'edge');
    expect(access).toEqual({
      nodes: [
        {
          nodeId: os.hostname(),
          nodeName: 'edge',
          manifestsDir: path.join('/data', 'nodes/demo/edge/etc/podmin/manifests'),
          podLogDir: '/var/log/pods',
        },
      ],
    });
    const moved = await localProvider(shell('/elsewhere')).containerLogs?.(context, 'edge');
    expect(moved).toMatchObject({ nodes: [{ podLogDir: '/elsewhere' }] });
  });

  it('aws: says where logs are and gives the commands that read them on a node of the NodeGroup', async () => {
    const access = await awsProvider(shell()).containerLogs?.(
      { ...context, provider: 'aws' },
      'edge',
    );
    // This shell's bucket cannot be opened: where logs go is not known, and the reason is said.
    expect(access).toEqual({
      guidance: awsLogGuidance('demo', 'edge', { kind: 'unknown', reason: 'unused' }),
    });
    const text = awsLogGuidance('demo', 'edge', { kind: 'off' }).join('\n');
    expect(text).toContain('Log export is off: `podmin setup --otel-logs endpoint=URL`');
    expect(text).toContain(
      'Name=tag:podmin:cluster,Values=demo Name=tag:podmin:nodegroup,Values=edge',
    );
    expect(text).toContain('aws ssm start-session --target <instance-id>');
    expect(text).toContain('crictl logs');
  });

  it("aws: names the OTLP endpoint from the cluster's saved setup inputs", async () => {
    const { TFVARS_OBJECT_KEY, serializeModuleVars } = await import('@podmin/cli-util-infra');
    const bucket = new InMemoryObjectStore();
    const vars: ModuleVars = {
      cluster: 'demo',
      region: 'eu-west-1',
      bucket: 'podmin-demo',
      vpc_cidr: '10.0.0.0/16',
      existing_vpc_id: null,
      amis: { arm64: 'ami-1' },
      nat64: null,
      nat64_generation: 'g1',
      nodegroups: {},
      otel_logs: null,
    };
    const aws = awsProvider({ ...shell(), openBucket: () => Promise.resolve(bucket) });
    const read = () => aws.containerLogs?.({ ...context, provider: 'aws' }, 'edge');

    expect(((await read()) as { guidance: string[] }).guidance[1]).toMatch(
      /Log export: not known \(the bucket has no tfstate\/podmin\.auto\.tfvars\.json: run podmin setup\)/,
    );
    bucket.store(TFVARS_OBJECT_KEY, serializeModuleVars(vars));
    expect(((await read()) as { guidance: string[] }).guidance[1]).toMatch(/^Log export is off/);
    bucket.store(
      TFVARS_OBJECT_KEY,
      serializeModuleVars({
        ...vars,
        otel_logs: {
          endpoint: 'https://otlp.example.com/v1/logs',
          protocol: 'http',
          mtls: true,
          ca_bucket: null,
          ca_key: null,
          headers_secret: false,
        },
      }),
    );
    const [first] = ((await read()) as { guidance: string[] }).guidance;
    expect(first).toBe(
      'Container logs of cluster demo are exported by Fluent Bit on every node over OTLP/HTTP to https://otlp.example.com/v1/logs: read them in that backend.',
    );
  });
});
