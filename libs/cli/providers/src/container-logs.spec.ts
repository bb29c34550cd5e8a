import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import type { ClusterContext, ContextStore } from '@podmin/cli-util-config';
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
    expect(access).toEqual({ guidance: awsLogGuidance('demo', 'edge') });
    const text = awsLogGuidance('demo', 'edge').join('\n');
    expect(text).toContain('podmin setup --otel-logs endpoint=URL');
    expect(text).toContain(
      'Name=tag:podmin:cluster,Values=demo Name=tag:podmin:nodegroup,Values=edge',
    );
    expect(text).toContain('aws ssm start-session --target <instance-id>');
    expect(text).toContain('crictl logs');
  });
});
