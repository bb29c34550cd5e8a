import { isIP } from 'node:net';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import {
  localNodeLayout,
  localNodeAddress,
  localPodPrefix,
  findNodeStack,
  startLocalNode,
} from './local-node';

describe('local node', () => {
  it('lays the node out like a VM under the data directory', () => {
    expect(localNodeLayout('/d', 'demo', 'default')).toEqual({
      root: '/d/nodes/demo/default',
      manifests: '/d/nodes/demo/default/etc/podmin/manifests',
      workloads: '/d/nodes/demo/default/run/podmin/workloads',
      pidFile: '/d/nodes/demo/default/run/podmin/agent.pid',
      stateFile: '/d/nodes/demo/default/run/podmin/agent.json',
      logFile: '/d/nodes/demo/default/var/log/podmin-agent.log',
    });
  });

  it('derives a stable unique-local /80 per cluster and NodeGroup', () => {
    const prefix = localPodPrefix('demo', 'default');
    expect(prefix).toMatch(/^fd[0-9a-f]{2}(:[0-9a-f]{1,4}){4}::\/80$/);
    expect(localPodPrefix('demo', 'default')).toBe(prefix);
    expect(localPodPrefix('demo', 'workers')).not.toBe(prefix);
  });

  it('derives a stable unique-local node address outside the Pod prefix', () => {
    const address = localNodeAddress('demo', 'default');
    expect(isIP(address)).toBe(6);
    expect(address).toMatch(/^fd[0-9a-f]{2}:/);
    expect(localNodeAddress('demo', 'default')).toBe(address);
    expect(localNodeAddress('demo', 'workers')).not.toBe(address);
    const prefix = localPodPrefix('demo', 'default').replace(/::\/80$/, ':');
    expect(address.startsWith(prefix)).toBe(false);
  });

  it('rejects a --workload-ca-publish that is not s3://BUCKET/KEY before starting anything', async () => {
    await expect(
      startLocalNode(
        {
          context: {
            cluster: 'demo',
            provider: 'local',
            region: 'local',
            bucket: '/b',
            secretsProvider: 'aws-parameter-store',
          },
          nodegroup: 'default',
          dataDir: '/nonexistent-podmin-data',
          agentProgram: '/nonexistent/podmin-agent.cjs',
          secretsFile: '/nonexistent/secrets.json',
          healthAddress: '127.0.0.1:1',
          registryListen: '127.0.0.1:2',
          workloadCaPublish: 'https://example/ca.pem',
        },
        new RecordingReporter(),
      ),
    ).rejects.toThrow(/--workload-ca-publish/);
  });

  it('finds kubelet and containerd on PATH only when present', () => {
    expect(findNodeStack({ PATH: path.join(__dirname, 'no-such-dir') })).toEqual({});
  });
});
