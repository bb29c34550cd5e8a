// The spec's SIGTERM order with real processes: two built agents on one local bucket (node-1
// leads; node-2 follows and reports a Ready Pod from a stand-in Pods API), then SIGTERM to
// node-2 as systemd would send it: to the supervisor's pid alone (`systemctl stop` with the
// unit's KillMode=mixed), or to every process of node-2 at once (KillMode=control-group, or a
// terminal's Ctrl-C to the foreground process group). Either way its log must show
// reconciliation stopped first, the drain acknowledged by the leader, the DNS TTL margin, and
// the dataplane detached last; the leader must have written a snapshot without node-2's
// endpoint before node-2's dataplane stopped; and node-2's agent-dns, queried in a loop, must
// answer every query until the supervisor stops it after the margin.
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import * as dnsPacket from 'dns-packet';
import { DNS_TTL_SECONDS } from '@podmin/agent-util-config';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { readSnapshot } from '@podmin/agent-feature-coordinator';
import {
  type BuiltAgent,
  commitDesiredState,
  daemonSetManifest,
  localAgentArgs,
  waitFor,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  AGENT_SERVICE_PROCESSES,
  makeLocalNode,
  startLocalAgent,
  type LocalNode,
} from './__fixtures__/local-node';
import { servePodsApi } from './__fixtures__/pods-api';

const MANIFEST = daemonSetManifest({ servicePort: 443 });

const NODE2_PREFIX = 'fd00:1:2:3:5::/80';
const NODE2_POD = 'fd00:1:2:3:5::a';

/** One JSON log line of an agent (the supervisor's or a service's). */
interface Line {
  time: string;
  service?: string;
  msg: string;
  [field: string]: unknown;
}

const linesOf = (agent: BuiltAgent): Line[] =>
  agent
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** One AAAA query to agent-dns and whether it answered with the Service's VIP. */
interface Probe {
  sentAt: number;
  ok: boolean;
  outcome: string;
}

/**
 * Queries `name` on 127.0.0.1:`port` every `everyMs` (each with a 500 ms deadline) until
 * stopped; a resolver in a Pod does the same while the node shuts down.
 */
function queryLoop(port: number, name: string, everyMs = 100) {
  const probes: Probe[] = [];
  let running = true;
  const once = (id: number): Promise<Probe> =>
    new Promise((resolve) => {
      const sentAt = Date.now();
      const socket = dgram.createSocket('udp4');
      const done = (ok: boolean, outcome: string) => {
        clearTimeout(timer);
        socket.close();
        resolve({ sentAt, ok, outcome });
      };
      const timer = setTimeout(() => done(false, 'timeout'), 500);
      socket.on('error', (err) => done(false, err.message));
      socket.on('message', (msg) => {
        const reply = dnsPacket.decode(msg) as dnsPacket.DecodedPacket & { rcode?: string };
        const answers = reply.answers ?? [];
        done(
          reply.id === id && reply.rcode === 'NOERROR' && answers.length === 1,
          `${reply.rcode ?? '?'} ${answers.length} answers`,
        );
      });
      socket.send(
        dnsPacket.encode({ type: 'query', id, questions: [{ name, type: 'AAAA' }] }),
        port,
        '127.0.0.1',
      );
    });
  const loop = (async () => {
    for (let id = 1; running; id = (id % 65_535) + 1) {
      probes.push(await once(id));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    probes,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('podmin-agent stop (built, two nodes)', () => {
  const nodes: LocalNode[] = [];
  afterAll(() => {
    for (const node of nodes) node.cleanup();
  });

  it.each([
    ['the supervisor alone (systemctl stop, KillMode=mixed)', 'supervisor'],
    ['every process of the node (KillMode=control-group, Ctrl-C)', 'group'],
  ] as const)(
    'SIGTERM to %s: stops reconciling, drains to the leader, waits the DNS TTL margin with DNS answering, then detaches the dataplane',
    async (_what, target) => {
      const node = await makeLocalNode('podmin-shutdown');
      nodes.push(node);
      const { bucket } = node;
      const objects = new LocalDirectoryObjectStore(bucket);
      await commitDesiredState(objects, {
        deploy: [buildDeployment(MANIFEST, { source: 'test', name: 'web', nodegroup: 'default' })],
      });
      // A short lease, so node-1 leads soon; the drain must beat it by far all the same.
      const env = { PODMIN_ELECTION_LEASE_MS: '8000', PODMIN_ELECTION_POLL_MS: '500' };
      const { agent: leader } = await startLocalAgent(node, { nodeId: 'node-1', env });
      const node2Root = node.subdir('node2');
      const socket = path.join(node2Root, 'pods-api.sock');
      const kubelet = await servePodsApi(socket, [
        { name: 'web', namespace: 'product', labels: { app: 'web' }, ipv6: NODE2_POD },
      ]);
      let follower: BuiltAgent | undefined;
      try {
        await waitFor(
          () =>
            Promise.resolve(
              fs.existsSync(path.join(bucket, 'dns/leader.json')) &&
                fs.readFileSync(path.join(bucket, 'dns/leader.json'), 'utf8').includes('node-1')
                ? true
                : undefined,
            ),
          'node-1 to lead',
          30_000,
        );
        const args = localAgentArgs(bucket);
        args[args.length - 1] = NODE2_PREFIX;
        const started = await startLocalAgent(node, {
          groupLeader: true,
          args,
          nodeRoot: node2Root,
          nodeId: 'node-2',
          env: { ...env, PODMIN_KUBELET_PODS_SOCKET: socket },
        });
        follower = started.agent;
        const node2Ports = started.ports;
        const backends = async () =>
          (await readSnapshot(objects, { cluster: 'demo' }))?.snapshot.services.flatMap((s) =>
            s.backends.map((b) => b.address),
          ) ?? [];
        await waitFor(
          async () => ((await backends()).includes(NODE2_POD) ? true : undefined),
          "node-2's Ready Pod in the leader's snapshot",
          60_000,
        );
        const node2 = follower;
        await waitFor(
          () =>
            Promise.resolve(
              linesOf(node2).some((l) => l.msg === 'take snapshot') ? true : undefined,
            ),
          'node-2 to take the snapshot',
          30_000,
        );
        const leaderFrom = linesOf(leader).length;

        const queries = queryLoop(node2Ports.dns, 'web.product.svc.cluster.local');
        await waitFor(
          () => Promise.resolve(queries.probes.some((p) => p.ok) ? true : undefined),
          "node-2's agent-dns to answer",
          10_000,
        );
        const signalledAt = Date.now();
        if (target === 'supervisor') node2.child.kill('SIGTERM');
        else process.kill(-(node2.child.pid ?? 0), 'SIGTERM');
        expect(await node2.exited).toBe(0);
        await queries.stop();

        const own = linesOf(node2);
        const at = (what: string, pick: (l: Line) => boolean): number => {
          const line = own.find(pick);
          if (!line) throw new Error(`no ${what} in node-2's log:\n${node2.tail(60)}`);
          return Date.parse(line.time);
        };
        const stop = (name: string) =>
          at(`stop service ${name}`, (l) => l.msg === 'stop service' && l['service'] === name);
        const stopped = (name: string) =>
          at(
            `service stopped ${name}`,
            (l) => l.msg === 'service stopped' && l['service'] === name,
          );
        const drained = own.find(
          (l) => l.service === 'agent-coordinator' && l.msg === 'drain endpoints',
        );
        expect(drained).toMatchObject({ leader: 'node-1', acknowledged: true });
        const steps = [
          ['shut down', at('shut down', (l) => l.msg === 'shut down')],
          ['stop staticpod', stop('staticpod')],
          ['staticpod stopped', stopped('staticpod')],
          ['stop coordinator', stop('coordinator')],
          ['drain acknowledged', Date.parse(drained?.time ?? '')],
          ['coordinator stopped', stopped('coordinator')],
          ['wait DNS TTL margin', at('margin', (l) => l.msg === 'wait DNS TTL margin')],
          ['stop dns', stop('dns')],
          ['stop dataplane', stop('dataplane')],
          ['dataplane stopped', stopped('dataplane')],
          ['stopped', at('stopped', (l) => l.msg === 'stopped')],
        ] as const;
        for (let i = 1; i < steps.length; i++) {
          const [before, t0] = steps[i - 1]!;
          const [after, t1] = steps[i]!;
          expect({ [`${before} ≤ ${after}`]: t0 <= t1 }).toEqual({
            [`${before} ≤ ${after}`]: true,
          });
        }
        // The margin is waited in full with the dataplane still up.
        const marginAt = at('margin', (l) => l.msg === 'wait DNS TTL margin');
        expect(stop('dns') - marginAt).toBeGreaterThanOrEqual(DNS_TTL_SECONDS * 1000 - 100);
        // Every service stopped on the supervisor's word, none on a signal. A group signal
        // reached every service process still running, and each left the stop to the
        // supervisor (staticpod, stopped first, may exit before it handles the signal); the
        // supervisor's own signal reached none of them.
        const services = (msg: string) =>
          own
            .filter((l) => l.msg === msg && l.service?.startsWith('agent-'))
            .map((l) => l.service)
            .sort();
        expect(services('stop requested by the supervisor')).toEqual(AGENT_SERVICE_PROCESSES);
        expect(services('signal')).toEqual([]);
        const ignored = services('ignore signal; the supervisor stops this process');
        if (target === 'group')
          expect(ignored).toEqual(
            expect.arrayContaining([
              'agent-dataplane',
              'agent-dns',
              'agent-identity',
              'agent-registry',
            ]),
          );
        else expect(ignored).toEqual([]);
        // Every query sent from the signal until agent-dns was told to stop was answered with the
        // VIP, through the drain and the whole TTL margin (one in flight at the stop may be cut).
        const beforeDnsStop = queries.probes.filter(
          (p) => p.sentAt >= signalledAt && p.sentAt < stop('dns') - 500,
        );
        const inMargin = beforeDnsStop.filter((p) => p.sentAt >= marginAt);
        expect(beforeDnsStop.filter((p) => !p.ok)).toEqual([]);
        expect(inMargin.length).toBeGreaterThanOrEqual(20);
        // The dataplane is the last service stopped.
        const stops = own.filter((l) => l.msg === 'stop service').map((l) => l['service']);
        expect(stops.at(-1)).toBe('dataplane');
        expect(stops.slice(0, 2)).toEqual(['staticpod', 'coordinator']);

        // The leader dropped node-2 on its drain and wrote a snapshot without node-2's backend,
        // both before node-2's dataplane stopped.
        const fromLeader = linesOf(leader).slice(leaderFrom);
        const dropped = fromLeader.find(
          (l) => l.msg === 'drop leaving node endpoints' && l['node'] === 'node-2',
        );
        expect(dropped).toMatchObject({ endpoints: 1 });
        const written = fromLeader.find(
          (l) =>
            l.msg === 'write snapshot' &&
            l['backends'] === 0 &&
            Date.parse(l.time) >= Date.parse(dropped?.time ?? ''),
        );
        expect(written).toBeDefined();
        expect(Date.parse(written?.time ?? '')).toBeLessThan(stop('dataplane'));
        expect(await backends()).toEqual([]);
      } catch (err) {
        console.error(`node-1:\n${leader.tail(40)}\nnode-2:\n${follower?.tail(60) ?? ''}`);
        throw err;
      } finally {
        kubelet.close();
        await Promise.all([leader.stop(), follower?.stop()]);
      }
    },
    180_000,
  );
});
