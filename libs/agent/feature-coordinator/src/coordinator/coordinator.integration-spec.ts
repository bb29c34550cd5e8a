// Three coordinators in one process sharing a local-directory bucket, with real elections and
// fenced snapshot writes; the mTLS transport and the kubelet watch are replaced by in-memory
// stand-ins here (each has its own real-part tests), so what is checked is the coordination
// logic: one leader, followers' endpoints in the leader's snapshot, failover, expiry.
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { commitDesiredState, makeTempDir, waitFor, type TempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { RecordingLog } from '../__fixtures__/recording-log';
import { serviceYaml } from '../__fixtures__/snapshot-fixtures';
import { systemMonotonicClock } from '../adapters/system-clocks';
import type {
  CoordinationPeer,
  CoordinationTransport,
  HelloAnswer,
  HelloHandler,
  HelloReport,
  LocalReadyPod,
  ReadinessSource,
} from '../coordinator.ports';
import { EndpointTable } from '../coordination/endpoint-table';
import type { Elector } from '../election/elector';
import { readSnapshot } from '../snapshot/snapshot-store';
import { Coordinator } from './coordinator';
import { ViewSource } from './services-view';
import { systemElector } from '../adapters/system-elector';

const CLUSTER = 'demo';
const TIMING = { leaseMs: 1500, pollMs: 250, renewMarginMs: 500 };

/** Routes Hello by address between the coordinators of this test; a node can be cut off. */
class Network {
  readonly handlers = new Map<string, { handler: HelloHandler; peer: CoordinationPeer }>();
  readonly cut = new Set<string>();

  transport(addr: string, peer: CoordinationPeer): CoordinationTransport {
    return {
      serve: (handler) => {
        this.handlers.set(addr, { handler, peer });
        return Promise.resolve({
          address: addr,
          close: () => Promise.resolve(void this.handlers.delete(addr)),
        });
      },
      hello: async (to: string, report: HelloReport): Promise<HelloAnswer> => {
        const target = this.handlers.get(to);
        if (!target || this.cut.has(to) || this.cut.has(addr))
          throw new PodminError('SERVICE_UNAVAILABLE', `no route to ${to}`);
        return target.handler.hello(peer, report);
      },
      close: () => undefined,
    };
  }
}

class StaticReadiness implements ReadinessSource {
  private listeners = new Set<() => void>();
  constructor(private pods: LocalReadyPod[]) {}
  set(pods: LocalReadyPod[]): void {
    this.pods = pods;
    for (const l of this.listeners) l();
  }
  current(): readonly LocalReadyPod[] {
    return this.pods;
  }
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  health() {
    return { ok: true, state: 'watching' as const, detail: 'test' };
  }
  async run(signal: AbortSignal): Promise<void> {
    await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
  }
}

/**
 * The shared bucket as one node sees it; `cut` makes every call fail as if the bucket were gone,
 * and `hold()` makes every call wait until released, as if the node were frozen mid-request.
 */
class SeverableStore {
  cut = false;
  private held: Promise<void> | undefined;
  constructor(private readonly inner: LocalDirectoryObjectStore) {}
  /** Calls from now on wait for the returned release. */
  hold(): () => void {
    let release = (): void => undefined;
    this.held = new Promise((r) => (release = r));
    return () => {
      this.held = undefined;
      release();
    };
  }
  view(): LocalDirectoryObjectStore {
    return new Proxy(this.inner, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = (): unknown =>
            this.cut
              ? Promise.reject(new PodminError('SERVICE_UNAVAILABLE', 'bucket cut off'))
              : (value as (...a: unknown[]) => unknown).apply(target, args);
          const held = this.held;
          return held === undefined ? call() : held.then(call);
        };
      },
    });
  }
}

interface Node {
  n: number;
  id: string;
  bucket: SeverableStore;
  coordinator: Coordinator;
  elector: Elector;
  readiness: StaticReadiness;
  log: RecordingLog;
}

describe('Coordinator (three nodes, one bucket)', () => {
  let tmp: TempDir;
  let store: LocalDirectoryObjectStore;
  let network: Network;
  let nodes: Node[];

  const prefixOf = (n: number) => `fd00:0:0:${n}::/80`;
  const web = (n: number, host: string): LocalReadyPod => ({
    namespace: 'default',
    pod: `web-${n}`,
    labels: { app: 'web' },
    address: `fd00:0:0:${n}::${host}`,
  });

  function node(n: number): Node {
    const id = `node-${n}`;
    const addr = `[fd00::${n}]:8081`;
    const log = new RecordingLog();
    const bucket = new SeverableStore(store);
    const elector = systemElector(bucket.view(), log, { id, addr, timing: TIMING });
    const readiness = new StaticReadiness([web(n, 'a')]);
    const peer: CoordinationPeer = {
      cluster: CLUSTER,
      nodegroup: 'web',
      nodeId: id,
      addresses: [`fd00::${n}`],
      remoteAddress: `fd00::${n}`,
    };
    const coordinator = new Coordinator(
      {
        store: bucket.view(),
        elector,
        readiness,
        endpoints: new EndpointTable(
          { monotonic: systemMonotonicClock, log },
          { leaseMs: TIMING.leaseMs, allowUniqueLocal: true },
        ),
        transport: network.transport(addr, peer),
        monotonic: systemMonotonicClock,
        log,
        health: () => undefined,
      },
      {
        cluster: CLUSTER,
        nodeId: id,
        nodegroup: 'web',
        prefix: prefixOf(n),
        helloIntervalMs: 200,
        snapshotIntervalMs: 300,
        coalesceMs: 50,
      },
    );
    return { n, id, bucket, coordinator, elector, readiness, log };
  }

  beforeEach(async () => {
    tmp = await makeTempDir('coordinator-');
    store = new LocalDirectoryObjectStore(tmp.path);
    network = new Network();
    const podYaml = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec: {}\n';
    await commitDesiredState(store, {
      entries: {},
      deploy: [
        {
          name: 'web',
          nodegroup: 'web',
          podYaml,
          service: {
            name: 'web',
            namespace: 'default',
            yaml: serviceYaml('default', 'web', { app: 'web' }, 80),
          },
        },
      ],
    });
    nodes = [node(1), node(2), node(3)];
  });

  afterEach(async () => {
    await Promise.all((nodes ?? []).map((n) => n.coordinator.stop()));
    await tmp.cleanup();
  });

  const backends = (n: Node) =>
    n.coordinator.view
      .current()
      .snapshot.services.flatMap((s) => s.backends.map((b) => b.address))
      .sort();

  /** Starts every node and waits until each holds all three backends; returns them. */
  const startAllWithEveryBackend = async (): Promise<string[]> => {
    await Promise.all(nodes.map((n) => n.coordinator.start()));
    const all = ['fd00:0:0:1::a', 'fd00:0:0:2::a', 'fd00:0:0:3::a'];
    await waitFor(
      () => (nodes.every((n) => backends(n).join() === all.join()) ? true : undefined),
      'every node to hold all three backends',
      10_000,
    );
    return all;
  };

  it('elects one leader whose snapshot carries every node’s ready endpoints, and every node takes it', async () => {
    const all = await startAllWithEveryBackend();
    const leaders = nodes.filter((n) => n.elector.isLeader());
    expect(leaders).toHaveLength(1);
    const stored = await readSnapshot(store, { cluster: CLUSTER });
    expect(stored?.snapshot.services.map((s) => s.name)).toEqual(['web']);
    for (const n of nodes) {
      expect(n.coordinator.view.current().source).toBe(ViewSource.LEADER);
      expect(n.coordinator.view.current().snapshot.revision).toBe(stored?.snapshot.revision);
    }
    expect(leaders[0]!.coordinator.leadership()).toMatchObject({
      leader: true,
      leaderId: leaders[0]!.id,
    });
    const follower = nodes.find((n) => !n.elector.isLeader())!;
    expect(follower.coordinator.leadership()).toMatchObject({ leader: false, validForMs: 0 });
    await expect(
      follower.coordinator.hello(
        { cluster: CLUSTER, nodegroup: 'web', nodeId: 'node-9', addresses: [], remoteAddress: '' },
        {
          nodeId: 'node-9',
          nodegroup: 'web',
          prefix: prefixOf(9),
          endpoints: [],
          knownRevision: '',
          leaving: false,
          rollouts: [],
        },
      ),
    ).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });

    // A Pod that stops being Ready leaves every node's snapshot.
    const other = nodes.find((n) => n !== leaders[0])!;
    other.readiness.set([]);
    const gone = all.filter((a) => !a.startsWith(`fd00:0:0:${other.n}:`));
    await waitFor(
      () => (nodes.every((n) => backends(n).join() === gone.join()) ? true : undefined),
      'the un-ready endpoint to leave every snapshot',
      10_000,
    );
  });

  it('drains at shutdown: a stopping follower, then the stopping leader, leave the stored snapshot before the lease', async () => {
    const all = await startAllWithEveryBackend();
    const stored = async () =>
      (await readSnapshot(store, { cluster: CLUSTER }))?.snapshot.services
        .flatMap((s) => s.backends.map((b) => b.address))
        .sort()
        .join();
    const leader = nodes.find((n) => n.elector.isLeader())!;
    const follower = nodes.find((n) => n !== leader)!;
    const rest = nodes.filter((n) => n !== follower);
    const without = (gone: Node[]) =>
      all.filter((a) => !gone.some((g) => a.startsWith(`fd00:0:0:${g.n}:`))).join();

    // The follower's leaving Hello is answered, and the leader drops it at once: long before
    // its report could expire (a lease, 1.5 s, after its last Hello).
    const stopped = systemMonotonicClock.nowMs();
    await follower.coordinator.stop();
    expect(follower.log.lines.find((l) => l.msg === 'drain endpoints')?.fields).toMatchObject({
      leader: leader.id,
      acknowledged: true,
    });
    expect(leader.log.messages()).toContain('drop leaving node endpoints');
    await waitFor(
      async () => ((await stored()) === without([follower]) ? true : undefined),
      "the follower's endpoints to leave the stored snapshot",
      5_000,
    );
    expect(systemMonotonicClock.nowMs() - stopped).toBeLessThan(TIMING.leaseMs);

    // The leader's own drain is one more pass without its endpoints, written before it resigns.
    await leader.coordinator.stop();
    expect(leader.log.lines.find((l) => l.msg === 'drain endpoints')?.fields).toMatchObject({
      leader: leader.id,
      acknowledged: true,
    });
    expect(await stored()).toBe(without([follower, leader]));
    expect(rest.length).toBe(2);
  });

  it('moves leadership when the leader is cut off, and the cut-off node keeps identities only after the lease', async () => {
    await Promise.all(nodes.map((n) => n.coordinator.start()));
    const first = await waitFor(() => nodes.find((n) => n.elector.isLeader()), 'a leader', 10_000);
    // Cut the leader off from the bucket and the network: it must stop leading by itself.
    network.cut.add(`[fd00::${first.n}]:8081`);
    first.bucket.cut = true;
    const second = await waitFor(
      () => nodes.find((n) => n !== first && n.elector.isLeader()),
      'another leader',
      TIMING.leaseMs * 4,
    );
    expect(first.elector.isLeader()).toBe(false);
    expect(first.log.messages()).toContain('stop leader duties');
    // The cut-off node hears from no leader, so after the lease it keeps identities only.
    await waitFor(
      () => (first.coordinator.view.current().source === ViewSource.EXPIRED ? true : undefined),
      'the cut-off node to clear its backends',
      TIMING.leaseMs * 4,
    );
    expect(backends(first)).toEqual([]);
    expect(first.coordinator.view.current().snapshot.services.map((s) => s.name)).toEqual(['web']);
    await waitFor(
      () => (second.log.messages().includes('write snapshot') ? true : undefined),
      'the new leader to write a snapshot',
      10_000,
    );
    // The new leader never hears from the cut-off node, so its endpoints are absent; the
    // survivors agree on one snapshot.
    await waitFor(
      () =>
        nodes
          .filter((n) => n !== first)
          .every(
            (n) =>
              n.coordinator.view.current().snapshot.revision ===
              second.coordinator.view.current().snapshot.revision,
          )
          ? true
          : undefined,
      'the survivors to agree',
      10_000,
    );
    expect(backends(second).some((a) => a.startsWith(`fd00:0:0:${first.n}:`))).toBe(false);
    first.bucket.cut = false;
  });

  it('refuses the write of a pass that was in flight when its term ended', async () => {
    await Promise.all(nodes.map((n) => n.coordinator.start()));
    const first = await waitFor(() => nodes.find((n) => n.elector.isLeader()), 'a leader', 10_000);
    await waitFor(
      () => (first.log.messages().includes('write snapshot') ? true : undefined),
      'the leader to write a snapshot',
      10_000,
    );
    // Every bucket call of the leader now hangs: its renewals stall, and its next pass stalls
    // in the middle, reading the index. A pass starts within one snapshot interval (300 ms),
    // well before the renew deadline (lease minus margin, at least 750 ms away).
    const from = first.log.lines.length;
    const release = first.bucket.hold();
    await waitFor(
      () => (first.log.messages().slice(from).includes('stop leader duties') ? true : undefined),
      'the held leader to stop its duties at its deadline',
      TIMING.leaseMs * 4,
    );
    expect(first.elector.isLeader()).toBe(false);
    await waitFor(
      () => nodes.find((n) => n !== first && n.elector.isLeader()),
      'another leader',
      TIMING.leaseMs * 4,
    );
    release();
    const refused = await waitFor(
      () => first.log.lines.slice(from).find((l) => l.msg === 'refuse snapshot write'),
      'the resumed pass to be refused',
      5_000,
    );
    expect(String(refused.fields['reason'])).toMatch(/no longer leads|stopped leading/);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(first.log.messages().slice(from)).not.toContain('write snapshot');
    expect(first.log.messages().slice(from)).not.toContain('become leader');
  });
});
