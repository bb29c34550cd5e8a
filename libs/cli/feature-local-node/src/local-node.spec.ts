import { isIP } from 'node:net';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import {
  localNodeLayout,
  localNodeAddress,
  localPodPrefix,
  findNodeStack,
  startLocalNode,
  healthAddressTaken,
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
          dnsListen: '127.0.0.1:3',
          workloadCaPublish: 'https://example/ca.pem',
        },
        new RecordingReporter(),
      ),
    ).rejects.toThrow(/--workload-ca-publish/);
  });

  it('finds kubelet and containerd on PATH only when present', () => {
    expect(findNodeStack({ PATH: path.join(__dirname, 'no-such-dir') })).toEqual({});
  });

  it('tells how to stop an agent of another cluster, in this configuration or another', () => {
    const agent = {
      cluster: 'alpha',
      nodegroup: 'default',
      nodeRoot: '/d/nodes/alpha/default',
      pid: 77,
      version: '0.1.0',
    };
    const self = { cluster: 'beta', nodegroup: 'default', dataDir: '/d' };
    const same = healthAddressTaken({ kind: 'agent', ready: true, agent }, '127.0.0.1:9440', self);
    expect(same.code).toBe('ALREADY_EXISTS');
    expect(same.message).toBe(
      "starting podmin-agent for beta/default: 127.0.0.1:9440 is held by another podmin-agent (cluster alpha, nodegroup default, node root /d/nodes/alpha/default, pid 77, version 0.1.0); this cluster's agent is not running",
    );
    expect(same.hint).toMatch(
      /^Stop that agent with `podmin use alpha && podmin teardown` or `kill 77`/,
    );
    const other = healthAddressTaken({ kind: 'agent', ready: true, agent }, '127.0.0.1:9440', {
      ...self,
      dataDir: '/elsewhere',
    });
    expect(other.hint).toContain(
      "`podmin teardown` in cluster alpha's context (the Podmin configuration whose data directory is /d) or `kill 77`",
    );
    expect(healthAddressTaken({ kind: 'unnamed-agent' }, '[::1]:9440', self).message).toContain(
      'is held by a podmin-agent that does not say which cluster it serves',
    );
  });
});
