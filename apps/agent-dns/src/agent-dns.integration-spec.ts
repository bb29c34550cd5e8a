import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as dnsPacket from 'dns-packet';
import { TestCoordinator, testSnapshot } from '@podmin/agent-contracts/testing';
import { agentClient, serviceSocket, type AgentClient } from '@podmin/agent-data-access-grpc';
import { freeLoopbackPort, localAgentArgs, waitFor } from '@podmin/testing';
import { serviceVip } from '@podmin/util-desired-state';
import { DnsZone } from '@podmin/agent-feature-dns';

// The bundle as the build ships it: agent-dns.cjs with agent-dns-udp.cjs and koffi/ beside
// it, so UDP is served by the recvmmsg worker; the same bundle alone falls back to dgram.

const root = path.resolve(__dirname, '../../..');
const CLUSTER = 'demo';
const services = [
  { namespace: 'default', name: 'web' },
  { namespace: 'product', name: 'database' },
];

/** Sends each packet from one socket and collects the replies by ID (unique per packet). */
async function exchange(port: number, packets: Buffer[]): Promise<Map<number, Buffer>> {
  const socket = dgram.createSocket('udp4');
  const replies = new Map<number, Buffer>();
  socket.on('message', (m: Buffer) => replies.set(m.readUInt16BE(0), m));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  for (const p of packets) socket.send(p, port, '127.0.0.1');
  await new Promise((r) => setTimeout(r, 1000));
  socket.close();
  return replies;
}

describe('the agent-dns bundle', () => {
  let dir: string;
  let coordinator: TestCoordinator | undefined;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-dns-bundle-'));
    const built = spawnSync(
      process.execPath,
      [path.join(root, 'tools/scripts/bundle.mjs'), 'agent-dns'],
      { env: { ...process.env, PODMIN_BUNDLE_OUT: path.join(dir, 'bin/agent-dns.cjs') } },
    );
    if (built.status !== 0) throw new Error(built.stderr.toString());
    for (const proto of ['libs/agent/contracts/proto', 'node_modules/grpc-health-check/proto']) {
      fs.cpSync(path.join(root, proto), path.join(dir, 'bin/proto'), { recursive: true });
    }
    // The same bundle without the worker beside it.
    fs.mkdirSync(path.join(dir, 'alone'));
    fs.copyFileSync(path.join(dir, 'bin/agent-dns.cjs'), path.join(dir, 'alone/agent-dns.cjs'));
    fs.symlinkSync(path.join(dir, 'bin/proto'), path.join(dir, 'alone/proto'));
    const runtimeDir = path.join(dir, 'node/run/podmin/agent');
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    coordinator = await TestCoordinator.start(serviceSocket(runtimeDir, 'coordinator'));
    coordinator.setView(
      testSnapshot(
        1,
        'rev-1',
        services.map((s) => ({ ...s, vip: serviceVip(CLUSTER, s.namespace, s.name) })),
      ),
    );
  }, 120_000);

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    coordinator?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a bundle with its own node root (sharing the coordinator); resolves when it serves. */
  async function run(bundle: string, name: string) {
    const nodeRoot = path.join(dir, name);
    const runtimeDir = path.join(nodeRoot, 'run/podmin/agent');
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    if (name !== 'node') {
      fs.symlinkSync(
        serviceSocket(path.join(dir, 'node/run/podmin/agent'), 'coordinator'),
        serviceSocket(runtimeDir, 'coordinator'),
      );
    }
    const port = await freeLoopbackPort();
    const child = spawn(process.execPath, [bundle, ...localAgentArgs(path.join(dir, 'bucket'))], {
      env: {
        ...process.env,
        PODMIN_NODE_ROOT: nodeRoot,
        PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${port}`,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let log = '';
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const client: AgentClient<'dns'> = agentClient('dns', serviceSocket(runtimeDir, 'dns'));
    await waitFor(
      async () => {
        const s = await client.getStatus({}, { timeoutMs: 500 });
        return s.snapshotRevision === 'rev-1' ? s : undefined;
      },
      `${name} serves the snapshot`,
      30_000,
    );
    const line = log
      .split('\n')
      .filter((l) => l.includes('serve Service DNS over UDP'))
      .map((l) => JSON.parse(l) as { path: string; reason?: string })[0];
    return { port, client, udp: line };
  }

  it('serves UDP by the recvmmsg worker, with the same bytes as the dgram fallback', async () => {
    const fast = await run(path.join(dir, 'bin/agent-dns.cjs'), 'node');
    const alone = await run(path.join(dir, 'alone/agent-dns.cjs'), 'node-alone');
    try {
      expect(fast.udp).toMatchObject({ path: 'recvmmsg-worker' });
      expect(fast.udp?.reason).toBeUndefined();
      expect(alone.udp?.path).toBe('dgram');
      expect(alone.udp?.reason).toContain('no UDP worker bundle at');
      const zone = DnsZone.build({ cluster: CLUSTER, generation: 1, services });
      const names = [
        'web.default.svc.cluster.local',
        'DATABASE.product.svc.cluster.local',
        'product.svc.cluster.local',
        'nope.default.svc.cluster.local',
        'svc.cluster.local',
        'example.com',
      ];
      const types = ['AAAA', 'A', 'ANY', 'SOA', 'NS', 'TXT'] as const;
      const packets = names.flatMap((name, i) =>
        types.map((type, j) =>
          dnsPacket.encode({
            type: 'query',
            id: i * 16 + j,
            flags: dnsPacket.RECURSION_DESIRED,
            questions: [{ name, type: type as dnsPacket.RecordType }],
          }),
        ),
      );
      const [fromFast, fromAlone] = await Promise.all([
        exchange(fast.port, packets),
        exchange(alone.port, packets),
      ]);
      expect(fromFast.size).toBe(packets.length);
      for (const packet of packets) {
        const id = packet.readUInt16BE(0);
        const expected = zone.resolve(packet, 'udp');
        expect(expected.kind).toBe('reply');
        if (expected.kind !== 'reply') continue;
        expect(fromFast.get(id)?.equals(expected.bytes)).toBe(true);
        expect(fromAlone.get(id)?.equals(expected.bytes)).toBe(true);
      }
      // The worker's counts reach the Dns contract.
      expect((await fast.client.getStatus({})).answered).toBeGreaterThanOrEqual(packets.length);
    } finally {
      fast.client.close();
      alone.client.close();
    }
  }, 90_000);
});
