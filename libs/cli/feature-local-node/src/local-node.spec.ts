import fs from 'node:fs';
import net, { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { healthAddressTaken } from './health-address-taken';
import { listeningPids } from './listening-pids';
import { startLocalNode } from './local-node';
import { localNodeAddress, localNodeLayout, localPodPrefix } from './node-layout';
import { findNodeStack } from './node-stack-binaries';

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
    const same = healthAddressTaken(
      { kind: 'agent', ready: true, agent },
      '127.0.0.1:9440',
      self,
      [77],
    );
    expect(same.code).toBe('ALREADY_EXISTS');
    expect(same.message).toBe(
      "starting podmin-agent for beta/default: 127.0.0.1:9440 is held by another podmin-agent (cluster alpha, nodegroup default, node root /d/nodes/alpha/default, pid 77, version 0.1.0); this cluster's agent is not running",
    );
    expect(same.hint).toMatch(
      /^Stop that agent with `podmin use alpha && podmin teardown` or `kill 77`/,
    );
    const other = healthAddressTaken(
      { kind: 'agent', ready: true, agent },
      '127.0.0.1:9440',
      { ...self, dataDir: '/elsewhere' },
      [77],
    );
    expect(other.hint).toContain(
      "`podmin teardown` in cluster alpha's context (the Podmin configuration whose data directory is /d) or `kill 77`",
    );
    expect(healthAddressTaken({ kind: 'unnamed-agent' }, '[::1]:9440', self).message).toContain(
      'is held by a podmin-agent that does not say which cluster it serves',
    );
  });

  it('names a pid an agent reports only when /proc shows it listening', () => {
    // What anything answering /readyz can claim: pid 1.
    const agent = {
      cluster: 'alpha',
      nodegroup: 'default',
      nodeRoot: '/d/nodes/alpha/default',
      pid: 1,
      version: '0.1.0',
    };
    const self = { cluster: 'beta', nodegroup: 'default', dataDir: '/d' };
    const answer = { kind: 'agent', ready: true, agent } as const;
    const another = healthAddressTaken(answer, '127.0.0.1:9440', self, [4242]);
    expect(another.message).toBe(
      "starting podmin-agent for beta/default: 127.0.0.1:9440 is held by pid 4242, which answers as another podmin-agent (cluster alpha, nodegroup default, node root /d/nodes/alpha/default, version 0.1.0) but is not the pid that agent reports; this cluster's agent is not running",
    );
    expect(another.hint).toMatch(
      /^Stop that agent with `podmin use alpha && podmin teardown` or `kill 4242`,/,
    );
    const unknown = healthAddressTaken(answer, '127.0.0.1:9440', self, []);
    expect(unknown.message).toBe(
      "starting podmin-agent for beta/default: 127.0.0.1:9440 is held by another podmin-agent (cluster alpha, nodegroup default, node root /d/nodes/alpha/default, version 0.1.0); this cluster's agent is not running",
    );
    expect(unknown.hint).toContain(
      "kill the process listening on :9440 (setup could not tell which process listens there; find it with `ss -ltnp 'sport = :9440'`",
    );
    for (const err of [another, unknown]) {
      expect(err.message).not.toMatch(/\bpid 1\b/);
      expect(err.hint).not.toContain('kill 1`');
    }
  });
});

describe('listeningPids', () => {
  /** A fake /proc: TCP tables, and pids whose fds link to sockets or other files. */
  const fakeProc = (tables: { tcp?: string[]; tcp6?: string[] }, fds: Record<string, string[]>) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-proc-'));
    fs.mkdirSync(path.join(root, 'net'));
    const header =
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
    for (const table of ['tcp', 'tcp6'] as const) {
      const rows = tables[table];
      if (rows) fs.writeFileSync(path.join(root, 'net', table), [header, ...rows, ''].join('\n'));
    }
    for (const [pid, links] of Object.entries(fds)) {
      fs.mkdirSync(path.join(root, pid, 'fd'), { recursive: true });
      links.forEach((link, fd) => fs.symlinkSync(link, path.join(root, pid, 'fd', String(fd))));
    }
    // Not a process: ignored.
    fs.mkdirSync(path.join(root, 'self'));
    return root;
  };
  /** One /proc/net/tcp row: `local` as HEXADDR:HEXPORT, state, inode. */
  const row = (local: string, state: string, inode: string) =>
    `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0000000000000000 100 0 0 10 0`;
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));
  const proc = (...args: Parameters<typeof fakeProc>) => {
    const root = fakeProc(...args);
    roots.push(root);
    return root;
  };

  it('finds the pid whose fd links to the socket listening on the port, IPv4 or IPv6', async () => {
    // 9440 = 0x24E0.
    const root = proc(
      {
        tcp: [row('0100007F:24E0', '01', '111'), row('0100007F:24E0', '0A', '222')],
        tcp6: [row('00000000000000000000000001000000:24E0', '0A', '333')],
      },
      {
        '10': ['/dev/null', 'socket:[111]'],
        '20': ['pipe:[5]', 'socket:[222]'],
        '30': ['socket:[333]'],
        '40': ['socket:[2220]'],
      },
    );
    expect(await listeningPids(9440, root)).toEqual([20, 30]);
    expect(await listeningPids(9441, root)).toEqual([]);
  });

  it('cannot tell when no readable fd links to the listening socket or there is no table', async () => {
    const root = proc({ tcp: [row('0100007F:24E0', '0A', '222')] }, { '20': ['socket:[999]'] });
    expect(await listeningPids(9440, root)).toEqual([]);
    expect(await listeningPids(9440, proc({}, { '20': ['socket:[222]'] }))).toEqual([]);
    expect(await listeningPids(9440, path.join(root, 'missing'))).toEqual([]);
  });

  it('finds this test process listening on an ephemeral loopback port in the real /proc', async () => {
    if (!fs.existsSync('/proc/net/tcp')) throw new Error('this test needs Linux /proc');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      expect(await listeningPids(port)).toContain(process.pid);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
