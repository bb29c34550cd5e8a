// Rollouts across a NodeGroup (DESIGN §6.12): three podmin-agents as three nodes, each in its own
// network namespace, sharing one local-directory bucket. Each node has a stand-in kubelet that
// follows its static-Pod directory and reports Pods Ready after a second (never for the broken
// image), so readiness is synthetic; the node tier runs a real kubelet. Sampled every 100 ms:
// with maxUnavailable 1 and maxSurge 0 never more than one node lacks an available Pod and the
// rollout completes; a broken image moves only the first wave, halts and goes back; a leader
// killed mid-rollout neither re-admits nor exceeds the limit, and the rollout completes after the
// failover. Needs root and `ip netns` (tools/netns-tier.sh). Short election timings (8 s / 1 s).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { LEADER_RECORD_KEY, parseLeaderRecord } from '@podmin/agent-feature-coordinator';
import { AGENT_BIN, commitDesiredState, waitFor } from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import { ROLLOUT_STATE_KEY, parseRolloutState, type RolloutState } from '@podmin/util-rollout';
import { ManifestKubelet } from './__fixtures__/manifest-kubelet';
import {
  NETNS_PREFIX,
  NetnsCluster,
  netnsUnavailable,
  startNodeAgent,
  storeClusterSecrets,
  type NetnsNode,
} from './__fixtures__/netns-cluster';
import type { NodeProcess } from './__fixtures__/node-process';

const CLUSTER = 'roll';
const LEASE_MS = 9_000;
const POLL_MS = 1_000;

const manifest = (tag: string, deadline = '5m') => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: web
  namespace: default
  annotations: { podmin.dev/progress-deadline: ${deadline} }
spec:
  selector: { matchLabels: { app: web } }
  updateStrategy: { type: RollingUpdate, rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }
  template:
    metadata:
      labels: { app: web }
    spec:
      nodeSelector: { podmin.dev/nodegroup: default }
      containers: [{ name: web, image: web:${tag} }]
`;

/** What the sampler saw across the rollout. */
interface Samples {
  samples: number;
  /** Most nodes at once without a Ready Pod of the deployment. */
  maxUnavailable: number;
  /** Most nodes at once running two Pods of it. */
  maxDouble: number;
  /** Nodes that ever ran the given image. */
  ran: Set<string>;
}

describe('rollouts across three agents in three network namespaces', () => {
  let cluster: NetnsCluster | undefined;
  let work: string;
  let bucket: string;
  let secretsFile: string;
  let objects: LocalDirectoryObjectStore;
  const kubelets = new Map<string, ManifestKubelet>();
  const agents = new Map<string, NodeProcess>();
  const started: NodeProcess[] = [];

  const nodes = (): readonly NetnsNode[] => cluster?.nodes ?? [];

  function startAgent(node: NetnsNode): NodeProcess {
    const p = startNodeAgent(node, {
      bin: AGENT_BIN,
      cluster: CLUSTER,
      bucket,
      secretsFile,
      work,
      env: {
        PODMIN_KUBELET_PODS_SOCKET: path.join(work, `${node.id}.pods.sock`),
        PODMIN_ELECTION_LEASE_MS: String(LEASE_MS),
        PODMIN_ELECTION_POLL_MS: String(POLL_MS),
      },
    });
    agents.set(node.id, p);
    started.push(p);
    return p;
  }

  /** Commits the manifest with image `web:<tag>`; returns its Pod payload key (the rollout's target). */
  const deploy = async (tag: string, deadline?: string): Promise<string> => {
    const index = await commitDesiredState(objects, {
      deploy: [
        buildDeployment(manifest(tag, deadline), {
          source: 'test',
          name: 'web',
          nodegroup: 'default',
        }),
      ],
    });
    const entry = index['default/web'];
    if (!entry) throw new Error('web is not in the committed index');
    return entry.pod;
  };

  const podsOf = (id: string) => kubelets.get(id)?.pods() ?? [];
  /** Whether every node in `ids` runs exactly one Pod, of `image`, Ready. */
  const allOn = (image: string, ids: readonly string[]) =>
    ids.every((id) => {
      const pods = podsOf(id);
      return pods.length === 1 && pods[0]?.image === image && pods[0].ready;
    });

  /** Samples every node's Pods every 100 ms until stopped. */
  function sample(image: string): { stop: () => Samples } {
    const seen: Samples = { samples: 0, maxUnavailable: 0, maxDouble: 0, ran: new Set() };
    const tick = (): void => {
      let unavailable = 0;
      let double = 0;
      for (const n of nodes()) {
        const pods = podsOf(n.id);
        if (!pods.some((p) => p.ready)) unavailable++;
        if (pods.length > 1) double++;
        if (pods.some((p) => p.image === image)) seen.ran.add(n.id);
      }
      seen.samples++;
      seen.maxUnavailable = Math.max(seen.maxUnavailable, unavailable);
      seen.maxDouble = Math.max(seen.maxDouble, double);
    };
    const timer = setInterval(tick, 100);
    return {
      stop: () => {
        clearInterval(timer);
        tick();
        return seen;
      },
    };
  }

  async function rolloutState(): Promise<RolloutState | undefined> {
    try {
      return parseRolloutState((await objects.get(ROLLOUT_STATE_KEY)).body);
    } catch {
      return undefined;
    }
  }

  const explain = (): string =>
    started
      .map(
        (p) =>
          `--- ${p.node.id} ---\n` +
          p
            .output()
            .split('\n')
            .filter((l) => /rollout|admit|halt|reconcile|error/i.test(l))
            .slice(-25)
            .join('\n'),
      )
      .join('\n') +
    `\n--- pods ---\n${JSON.stringify(Object.fromEntries(nodes().map((n) => [n.id, podsOf(n.id)])))}`;

  const step = async (fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      console.error(explain());
      throw err;
    }
  };

  beforeAll(async () => {
    const unavailable = netnsUnavailable();
    if (unavailable) throw new Error(`cannot run: ${unavailable}`);
    if (!fs.existsSync(AGENT_BIN))
      throw new Error(`${AGENT_BIN} is missing (build the agent bundles first)`);
    cluster = NetnsCluster.create(3, `${NETNS_PREFIX}r${process.pid}-`);
    cluster.checkReachability();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-rollout-'));
    bucket = path.join(work, 'bucket');
    fs.mkdirSync(bucket);
    objects = new LocalDirectoryObjectStore(bucket);
    secretsFile = path.join(work, 'secrets.json');
    await storeClusterSecrets(secretsFile, CLUSTER);
    await deploy('v1');
    for (const node of cluster.nodes) {
      const kubelet = new ManifestKubelet(
        path.join(work, `${node.id}.pods.sock`),
        path.join(work, node.id, 'etc/podmin/manifests'),
        { startMs: 1_000, brokenImage: ':broken' },
      );
      await kubelet.start();
      kubelets.set(node.id, kubelet);
      startAgent(node);
    }
    const ids = cluster.nodes.map((n) => n.id);
    await step(() =>
      waitFor(
        () => allOn('registry.podmin.internal/apps/web:v1', ids) || undefined,
        'every node on v1',
        60_000,
        200,
      ).then(() => undefined),
    );
  }, 90_000);

  afterAll(async () => {
    await Promise.all(started.map((p) => p.kill()));
    for (const k of kubelets.values()) k.stop();
    cluster?.destroy();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('moves one node at a time with maxUnavailable 1 and maxSurge 0, and completes', async () => {
    await step(async () => {
      const image = 'registry.podmin.internal/apps/web:v2';
      const sampler = sample(image);
      await deploy('v2');
      await waitFor(
        () =>
          allOn(
            image,
            nodes().map((n) => n.id),
          ) || undefined,
        'every node on v2',
        120_000,
        200,
      );
      const seen = sampler.stop();
      expect(seen.samples).toBeGreaterThan(50);
      expect(seen.maxUnavailable).toBe(1);
      expect(seen.maxDouble).toBe(0);
      const state = await rolloutState();
      expect(Object.keys(state?.deployments['default/web']?.admitted ?? {}).sort()).toEqual(
        nodes()
          .map((n) => n.id)
          .sort(),
      );
    });
  });

  it('moves only the first wave to a broken image, halts, and goes back', async () => {
    await step(async () => {
      const broken = 'registry.podmin.internal/apps/web:broken';
      const sampler = sample(broken);
      await deploy('broken', '6s');
      const halted = await waitFor(
        async () => (await rolloutState())?.deployments['default/web']?.halted ?? undefined,
        'the rollout to halt',
        60_000,
        200,
      );
      expect(halted.reason).toMatch(/ErrImagePull/);
      await waitFor(
        () =>
          allOn(
            'registry.podmin.internal/apps/web:v2',
            nodes().map((n) => n.id),
          ) || undefined,
        'every node back on v2',
        60_000,
        200,
      );
      // A few more polls: nobody else moves once halted.
      await new Promise((r) => setTimeout(r, 4_000));
      const seen = sampler.stop();
      expect([...seen.ran]).toEqual([halted.node]);
      expect(seen.maxUnavailable).toBeLessThanOrEqual(1);
      expect(
        allOn(
          'registry.podmin.internal/apps/web:v2',
          nodes().map((n) => n.id),
        ),
      ).toBe(true);
    });
  });

  it('never exceeds the limit when the leader dies mid-rollout, and completes after the failover', async () => {
    await step(async () => {
      const image = 'registry.podmin.internal/apps/web:v4';
      const sampler = sample(image);
      const target = await deploy('v4');
      const first = await waitFor(
        async () => {
          const rollout = (await rolloutState())?.deployments['default/web'];
          if (rollout?.target !== target) return undefined;
          return Object.keys(rollout.admitted).length > 0 ? { ...rollout.admitted } : undefined;
        },
        'a first admission',
        60_000,
        100,
      );
      const leader = parseLeaderRecord((await objects.get(LEADER_RECORD_KEY)).body).leaderID;
      await agents.get(leader)?.kill();
      const survivors = nodes()
        .map((n) => n.id)
        .filter((id) => id !== leader);
      await waitFor(
        () => allOn(image, survivors) || undefined,
        'the survivors on v4',
        120_000,
        200,
      );
      const seen = sampler.stop();
      expect(seen.maxUnavailable).toBeLessThanOrEqual(1);
      expect(seen.maxDouble).toBe(0);
      // Admissions made before the failover stand as they were: nobody was admitted twice.
      const after = (await rolloutState())?.deployments['default/web']?.admitted ?? {};
      for (const [node, time] of Object.entries(first)) expect(after[node]).toBe(time);
      const newLeader = parseLeaderRecord((await objects.get(LEADER_RECORD_KEY)).body).leaderID;
      expect(survivors).toContain(newLeader);
    });
  });
});
