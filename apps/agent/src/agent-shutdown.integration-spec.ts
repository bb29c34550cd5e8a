// The spec's SIGTERM order with real processes: two built agents on one local bucket (node-1
// leads; node-2 follows and reports a Ready Pod from a stand-in Pods API), then SIGTERM to
// node-2. Its log must show reconciliation stopped first, the drain acknowledged by the leader,
// the DNS TTL margin, and the dataplane detached last; the leader must have written a snapshot
// without node-2's endpoint before node-2's dataplane stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import { readSnapshot } from '@podmin/agent-feature-coordinator';
import { commitDesiredState, freeLoopbackPort, localAgentArgs, waitFor } from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  createClusterCa,
  generateWorkloadCaSecretValue,
  serializeClusterCaSecret,
} from '@podmin/util-pki';
import { spawnBuiltAgent, type AgentPorts, type BuiltAgent } from './__fixtures__/built-agent';
import { servePodsApi } from './__fixtures__/pods-api';

const MANIFEST = `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: web, namespace: product }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      nodeSelector: { podmin.dev/nodegroup: default }
      containers: [{ name: web, image: hello:v1 }]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: product }
spec:
  selector: { app: web }
  ports: [{ port: 443, targetPort: 8443 }]
`;

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

describe('podmin-agent SIGTERM (built, two nodes)', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const ports = async (): Promise<AgentPorts> => ({
    health: await freeLoopbackPort(),
    registry: await freeLoopbackPort(),
    dns: await freeLoopbackPort(),
    coordination: await freeLoopbackPort(),
  });

  it('stops reconciling, drains to the leader, waits the DNS TTL margin, then detaches the dataplane', async () => {
    const bucket = tmp('podmin-shutdown-bucket-');
    const secretsFile = path.join(tmp('podmin-shutdown-secrets-'), 'demo.json');
    const secrets = new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' });
    await secrets.create(
      '/demo/_system/workload-ca-key',
      Buffer.from(generateWorkloadCaSecretValue()),
    );
    await secrets.create(
      '/demo/_system/cluster-ca',
      Buffer.from(serializeClusterCaSecret(await createClusterCa('demo', new Date()))),
    );
    const objects = new LocalDirectoryObjectStore(bucket);
    await commitDesiredState(objects, {
      deploy: [buildDeployment(MANIFEST, { source: 'test', name: 'web', nodegroup: 'default' })],
    });
    // A short lease, so node-1 leads soon; the drain must beat it by far all the same.
    const env = {
      PODMIN_LOCAL_SECRETS_FILE: secretsFile,
      PODMIN_ELECTION_LEASE_MS: '8000',
      PODMIN_ELECTION_POLL_MS: '500',
    };
    const node1Root = tmp('podmin-shutdown-node1-');
    const leader = spawnBuiltAgent({
      args: localAgentArgs(bucket),
      nodeRoot: node1Root,
      ports: await ports(),
      nodeId: 'node-1',
      env,
    });
    const node2Root = tmp('podmin-shutdown-node2-');
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
      follower = spawnBuiltAgent({
        args,
        nodeRoot: node2Root,
        ports: await ports(),
        nodeId: 'node-2',
        env: { ...env, PODMIN_KUBELET_PODS_SOCKET: socket },
      });
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
          Promise.resolve(linesOf(node2).some((l) => l.msg === 'take snapshot') ? true : undefined),
        'node-2 to take the snapshot',
        30_000,
      );
      const leaderFrom = linesOf(leader).length;

      node2.child.kill('SIGTERM');
      expect(await node2.exited).toBe(0);

      const own = linesOf(node2);
      const at = (what: string, pick: (l: Line) => boolean): number => {
        const line = own.find(pick);
        if (!line) throw new Error(`no ${what} in node-2's log:\n${node2.tail(60)}`);
        return Date.parse(line.time);
      };
      const stop = (name: string) =>
        at(`stop service ${name}`, (l) => l.msg === 'stop service' && l['service'] === name);
      const stopped = (name: string) =>
        at(`service stopped ${name}`, (l) => l.msg === 'service stopped' && l['service'] === name);
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
        expect({ [`${before} ≤ ${after}`]: t0 <= t1 }).toEqual({ [`${before} ≤ ${after}`]: true });
      }
      // The margin is waited in full with the dataplane still up.
      expect(
        stop('dns') - at('margin', (l) => l.msg === 'wait DNS TTL margin'),
      ).toBeGreaterThanOrEqual(4_900);
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
  }, 180_000);
});
