import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { snapshot as snapshotTypes } from '@podmin/agent-contracts';
import { TestCoordinator } from '@podmin/agent-contracts/testing';
import { agentClient, serviceSocket, type AgentClient } from '@podmin/agent-data-access-grpc';
import { describeUnless, localAgentArgs, waitFor } from '@podmin/testing';
import { serviceVip } from '@podmin/util-desired-state';
import { PodNetwork } from './__fixtures__/pod-network';

// The real agent-dataplane process, bundled as the build ships it, in a node network namespace
// with Pod namespaces wired like ptp CNI's, fed by a real Coordinator gRPC server. Clients and
// servers are the C workload in __fixtures__/flows.c.

const root = path.resolve(__dirname, '../../../..');
const CLUSTER = 'demo';
const NODE = 'fd00:10::1';
const PREFIX = 'fd00:1:2:3:4'; // localAgentArgs' Pod prefix
const WEB = serviceVip(CLUSTER, 'default', 'web');
const TCP = snapshotTypes.SnapshotPort_Protocol.TCP;
const UDP = snapshotTypes.SnapshotPort_Protocol.UDP;

let revision = 0;
function snapshotOf(web: string[] | undefined): snapshotTypes.ServiceSnapshot {
  revision++;
  const services: snapshotTypes.SnapshotService[] =
    web === undefined
      ? []
      : [
          {
            namespace: 'default',
            name: 'web',
            vip: WEB,
            ports: [
              { port: 53, targetPort: 5353, protocol: UDP },
              { port: 80, targetPort: 8080, protocol: TCP },
            ],
            backends: web.map((address) => ({ address, nodeId: 'node-a' })),
          },
        ];
  return { generation: revision, revision: `rev-${revision}`, services };
}

const unusable =
  PodNetwork.usable() ??
  (spawnSync('gcc', ['--version']).status === 0 ? undefined : 'gcc is missing');
describeUnless(unusable, 'integration:dataplane')('agent-dataplane in network namespaces', () => {
  const tag = `pd${process.pid % 100000}`;
  let dir: string;
  let flows: string;
  let net: PodNetwork;
  let coordinator: TestCoordinator;
  let dataplane: ChildProcess;
  let client: AgentClient<'dataplane'>;
  let log = '';
  const status = () => client.getStatus({}, { timeoutMs: 3000 });
  const backends = {
    a: `${PREFIX}::20`,
    b: `${PREFIX}::21`,
    c: `${PREFIX}::22`,
    d: `${PREFIX}::23`,
  };

  /** `flows` in the client Pod. */
  const fromClient = (...args: string[]): string => {
    const r = net.exec(net.ns('client'), [flows, ...args]);
    if (r.status !== 0) throw new Error(`flows ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  /** `flows tcp` to the VIP; `failures` are its lines on each failed connection. */
  const tcpFlows = (count: number, procs = 4) => {
    const r = net.exec(net.ns('client'), [flows, 'tcp', WEB, '80', String(count), String(procs)]);
    if (r.status !== 0) throw new Error(`flows tcp ${count}: ${r.stderr}`);
    return tally(r.stdout, r.stderr);
  };
  /** `flows tcp` to the VIP from Pod `from`, run in the background. */
  const tcpFlowsAsync = (from: string, count: number, procs: number) =>
    new Promise<ReturnType<typeof tally>>((resolve, reject) => {
      const child = net.spawn(net.ns(from), [
        flows,
        'tcp',
        WEB,
        '80',
        String(count),
        String(procs),
      ]);
      let out = '';
      let err = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      // 'close', not 'exit': only then has all of stdout been read.
      child.once('close', (code) =>
        code === 0 ? resolve(tally(out, err)) : reject(new Error(`flows tcp from ${from}: ${err}`)),
      );
    });
  /** Packets Pod `pod` received for an address not its own (so: sent to the wrong Pod). */
  const addrErrors = (pod: string): number => {
    const snmp = net.exec(net.ns(pod), ['cat', '/proc/net/snmp6']).stdout;
    return Number(/^Ip6InAddrErrors\s+(\d+)$/m.exec(snmp)?.[1] ?? NaN);
  };
  /** What `flows tcp` printed. */
  const tally = (out: string, stderr: string) => {
    const [, ok, failed] = /ok (\d+) failed (\d+)/.exec(out) ?? [];
    const [, min, max] = /ports (\d+) (\d+)/.exec(out) ?? [];
    const [, slow] = /^slow (\d+)$/m.exec(out) ?? [];
    const names: Record<string, number> = Object.fromEntries(
      [...out.matchAll(/^(web-[a-z]) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
    );
    return {
      ok: Number(ok),
      failed: Number(failed),
      portMin: Number(min),
      portMax: Number(max),
      slow: Number(slow),
      names,
      failures: stderr.split('\n').filter((line) => line.startsWith('failed ')),
    };
  };
  const serve = async (pod: string) => {
    net.spawn(net.ns(pod), [flows, 'serve-tcp', '8080', pod]);
    net.spawn(net.ns(pod), [flows, 'serve-udp', '5353', pod]);
    // Straight to the Pod from the node, so later checks never race the servers' start.
    const address = net.pods.get(pod)?.address as string;
    await waitFor(
      () => {
        const udp = net.exec(net.nodeNs, [flows, 'udp', address, '5353']).stdout;
        const tcp = net.exec(net.nodeNs, [flows, 'tcp', address, '8080', '1', '1']).stdout;
        return udp.startsWith(pod) && tcp.includes('ok 1 ') ? true : undefined;
      },
      `${pod} serves`,
      15_000,
    );
  };
  const apply = async (web: string[] | undefined) => {
    const snap = snapshotOf(web);
    coordinator.setView(snap);
    return waitFor(
      async () => {
        const s = await status();
        return s.snapshotRevision === snap.revision ? s : undefined;
      },
      'dataplane follows the snapshot',
      15_000,
    );
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-dataplane-'));
    flows = path.join(dir, 'flows');
    const cc = spawnSync(
      'gcc',
      ['-O2', '-o', flows, path.join(__dirname, '__fixtures__/flows.c')],
      {
        encoding: 'utf8',
      },
    );
    if (cc.status !== 0) throw new Error(cc.stderr);
    const bundle = path.join(dir, 'bin', 'agent-dataplane.cjs');
    const built = spawnSync(
      process.execPath,
      [path.join(root, 'tools/scripts/bundle.mjs'), 'agent-dataplane'],
      {
        env: { ...process.env, PODMIN_BUNDLE_OUT: bundle },
        encoding: 'utf8',
      },
    );
    if (built.status !== 0) throw new Error(built.stderr);
    fs.cpSync(path.join(root, 'libs/agent/contracts/proto'), path.join(dir, 'bin/proto'), {
      recursive: true,
    });
    fs.cpSync(
      path.join(root, 'node_modules/grpc-health-check/proto'),
      path.join(dir, 'bin/proto'),
      {
        recursive: true,
      },
    );

    net = PodNetwork.create(tag, NODE);
    net.addPod('client', `${PREFIX}::10`);
    net.addPod('client-2', `${PREFIX}::11`);
    for (const pod of ['a', 'b', 'c'] as const) {
      net.addPod(`web-${pod}`, backends[pod]);
      await serve(`web-${pod}`);
    }
    const runtimeDir = path.join(dir, 'run/podmin/agent');
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    coordinator = await TestCoordinator.start(serviceSocket(runtimeDir, 'coordinator'));
    dataplane = net.spawn(
      net.nodeNs,
      [process.execPath, bundle, ...localAgentArgs(path.join(dir, 'bucket'))],
      {
        ...process.env,
        PODMIN_NODE_ROOT: dir,
        PODMIN_NODE_ADDRESS: NODE,
      },
    );
    dataplane.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    client = agentClient('dataplane', serviceSocket(runtimeDir, 'dataplane'));
    await waitFor(status, 'agent-dataplane answers', 30_000);
  }, 120_000);

  afterAll(() => {
    client?.close();
    coordinator?.stop();
    net?.destroy();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    if (expect.getState().assertionCalls === 0) process.stderr.write(log);
  });

  it('stays detached, with nothing loaded, while no Service exists', async () => {
    const s = await apply(undefined);
    expect(s).toMatchObject({ attached: false, interfaces: [], vips: 0, problem: '' });
    // Nothing forwards the VIP: the node has no route for it.
    expect(fromClient('udp', WEB, '53')).toMatch(/^error /);
  });

  it('carries TCP and UDP to ready backends, replies coming from the VIP, SNAT ports in range', async () => {
    const s = await apply([backends.a, backends.b, backends.c]);
    expect(s).toMatchObject({
      attached: true,
      vips: 1,
      serviceKeys: 2,
      backends: 6,
      problem: '',
    });
    expect(s.interfaces).toHaveLength(5); // two clients, three backends
    const r = tcpFlows(600);
    expect(r).toMatchObject({ ok: 600, failed: 0 });
    expect(Object.keys(r.names).sort()).toEqual(['web-a', 'web-b', 'web-c']);
    expect(r.portMin).toBeGreaterThanOrEqual(30000);
    expect(r.portMax).toBeLessThanOrEqual(32767);
    // A connected UDP socket accepts only datagrams from the VIP and port it sent to.
    expect(fromClient('udp', WEB, '53')).toMatch(/^web-[abc] 3\d{4}\n$/);
  });

  it('keeps a flow on its backend, and removing backends moves only new flows', async () => {
    await apply([backends.a, backends.b, backends.c]);
    const pinned = () => fromClient('udp', WEB, '53', '8', '41000').split(' ')[0] as string;
    const first = pinned();
    for (let i = 0; i < 5; i++) expect(pinned()).toBe(first);
    const others = ['web-a', 'web-b', 'web-c'].filter((n) => n !== first);
    const keep = others[0] as string;
    // Only `keep` stays ready: the pinned flow stays where it was; new flows all go to `keep`.
    await apply([backends[keep.slice(-1) as 'a' | 'b' | 'c']]);
    expect(pinned()).toBe(first);
    const r = tcpFlows(200);
    expect(r).toMatchObject({ ok: 200, failed: 0, names: { [keep]: 200 } });
  });

  it("sends a new connection on a closed one's client port to the backend it picks, at once", async () => {
    // The same tuple twice: the second connection is a new flow on the first one's forward
    // entry, whose cached route leads to the backend that is gone. It must not be used.
    const fromPort = () => {
      const r = net.exec(net.ns('client'), [flows, 'tcp', WEB, '80', '1', '1', '42000']);
      return tally(r.stdout, r.stderr);
    };
    await apply([backends.a]);
    expect(fromPort()).toMatchObject({ ok: 1, failed: 0, names: { 'web-a': 1 } });
    const misrouted = addrErrors('web-a');
    await apply([backends.b]);
    expect(fromPort()).toMatchObject({ ok: 1, failed: 0, names: { 'web-b': 1 } });
    expect(addrErrors('web-a')).toBe(misrouted);
  });

  it('fails fast with no ready backend, and drops a fragmented datagram to the VIP', async () => {
    await apply([]);
    expect(fromClient('udp', WEB, '53')).toBe('error Connection refused\n');
    // Timed inside the client, so a loaded machine's process start does not count: a dropped
    // SYN would be retransmitted after 1 s, so a refusal within it answers the first SYN.
    const tcp = net.exec(net.ns('client'), [
      'python3',
      '-c',
      `import socket, time\ns=socket.socket(socket.AF_INET6)\nt=time.monotonic()\ntry:\n  s.connect(("${WEB}",80)); print("connected")\nexcept OSError as e: print(e.errno, round((time.monotonic()-t)*1000))`,
    ]);
    const [errno, ms] = tcp.stdout.trim().split(' ');
    expect(errno).toBe('111'); // ECONNREFUSED
    expect(Number(ms)).toBeLessThan(1000);

    const before = (await apply([backends.a])).droppedUnparsed;
    expect(fromClient('udp', WEB, '53', '200')).toMatch(/^web-a /);
    // 3,000 bytes exceed the veth's 1,500-byte MTU: the client's kernel fragments them.
    expect(fromClient('udp', WEB, '53', '3000')).toMatch(/^error /);
    const after = (await status()).droppedUnparsed;
    expect(after).toBeGreaterThanOrEqual(before + 2);
  });

  it('attaches to a Pod veth that appears later (readiness hint) and sends new flows to it', async () => {
    net.addPod('web-d', backends.d);
    await serve('web-d');
    const s = await apply([backends.d]);
    expect(s.interfaces).toContain(net.pods.get('web-d')?.hostVeth);
    expect(tcpFlows(50)).toMatchObject({ ok: 50, failed: 0, names: { 'web-d': 50 } });
  });

  it('keeps working through 300,000 short flows, more than the 262,144-entry flow maps hold', async () => {
    await apply([backends.a, backends.b, backends.c, backends.d]);
    const r = tcpFlows(300_000, 16);
    process.stderr.write(
      `dataplane: 300,000 short flows: ${r.ok} ok, ${r.failed} failed\n` +
        r.failures.map((line) => `  ${line}\n`).join(''),
    );
    expect(r.ok + r.failed).toBe(300_000);
    // Every flow gets through. 1-4 used to fail: a SNAT port probe read its clock before the
    // other CPU stamped that port's live flow, took the negative idle time for a huge one and
    // handed the live flow's port to a new flow.
    expect(r.failures).toEqual([]);
    expect(r.failed).toBe(0);
    expect(r.portMin).toBeGreaterThanOrEqual(30000);
    expect(r.portMax).toBeLessThanOrEqual(32767);
    const s = await status();
    expect(s.snatExhausted).toBe(0);
    expect(tcpFlows(100)).toMatchObject({ ok: 100, failed: 0 });
  }, 240_000);

  it("sends the replies of a SNAT port taken over from another client's flow to the new client", async () => {
    // One backend, so every flow needs one of its 2,768 ports, and two client Pods opening
    // short flows at once: each keeps taking over ports the other's flows used a moment ago
    // (closed by resets). Replies must follow the port's new flow, not the route its old
    // flow cached. One sent to the other client arrives there for an address that is not
    // its own, which its kernel counts (Ip6InAddrErrors), and its connection waits out a SYN
    // retransmission (1 s).
    await apply([backends.a]);
    const misrouted = [addrErrors('client'), addrErrors('client-2')];
    const before = await status();
    const [one, two] = await Promise.all([
      tcpFlowsAsync('client', 4_000, 2),
      tcpFlowsAsync('client-2', 4_000, 2),
    ]);
    for (const r of [one, two]) {
      expect(r).toMatchObject({ ok: 4_000, failed: 0, names: { 'web-a': 4_000 } });
      expect(r.slow).toBeLessThan(200); // a loaded machine may delay a few
    }
    expect([addrErrors('client'), addrErrors('client-2')]).toEqual(misrouted);
    const after = await status();
    expect(Number(after.newFlows) - Number(before.newFlows)).toBe(8_000);
  }, 120_000);

  it('detaches when the last Service goes, and on SIGTERM', async () => {
    await apply([backends.a]);
    expect((await status()).attached).toBe(true);
    const s = await apply(undefined);
    expect(s).toMatchObject({ attached: false, vips: 0 });
    expect(fromClient('udp', WEB, '53')).toMatch(/^error /);
    await apply([backends.a]);
    expect(fromClient('udp', WEB, '53')).toMatch(/^web-a /);
    const exited = new Promise<number | null>((resolve) => dataplane.once('exit', resolve));
    dataplane.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fromClient('udp', WEB, '53')).toMatch(/^error /);
  });
});
