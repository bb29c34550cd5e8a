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
import type { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { LEADER_RECORD_KEY, parseLeaderRecord } from '@podmin/agent-feature-coordinator';
import { commitDesiredState, rollingDaemonSetManifest, waitFor } from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import { ROLLOUT_STATE_KEY, parseRolloutState, type RolloutState } from '@podmin/util-rollout';
import { ManifestKubelet } from './__fixtures__/manifest-kubelet';
import {
  NETNS_PREFIX,
  createAgentCluster,
  sharedLocalBucket,
  startNodeAgent,
  type NetnsCluster,
  type NetnsNode,
  type NodeAgentSetup,
} from './__fixtures__/netns-cluster';
import { explainingSteps, recentOutput, type NodeProcess } from './__fixtures__/node-process';

const CLUSTER = 'roll';
const LEASE_MS = 9_000;
const POLL_MS = 1_000;

/** DaemonSet `web` on image `web:<tag>`, one node at a time, each given `deadline` to progress. */
const manifest = (tag: string, deadline = '5m') =>
  rollingDaemonSetManifest({
    namespace: 'default',
    image: `web:${tag}`,
    maxSurge: 0,
    maxUnavailable: 1,
    annotations: { 'podmin.dev/progress-deadline': deadline },
  });

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
  let objects: LocalDirectoryObjectStore;
  let setup: NodeAgentSetup;
  const kubelets = new Map<string, ManifestKubelet>();
  const agents = new Map<string, NodeProcess>();
  const started: NodeProcess[] = [];

  const nodes = (): readonly NetnsNode[] => cluster?.nodes ?? [];

  function startAgent(node: NetnsNode): NodeProcess {
    const p = startNodeAgent(node, {
      ...setup,
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

  const nodeIds = (): string[] => nodes().map((n) => n.id);
  const podsOf = (id: string) => kubelets.get(id)?.pods() ?? [];
  /** Whether every node in `ids` runs exactly one Pod, of `image`, Ready. */
  const allOn = (image: string, ids: readonly string[] = nodeIds()) =>
    ids.every((id) => {
      const pods = podsOf(id);
      return pods.length === 1 && pods[0]?.image === image && pods[0].ready;
    });
  /** Waits (sampling every 200 ms) until {@link allOn} holds. */
  const untilAllOn = (image: string, what: string, timeoutMs: number, ids?: readonly string[]) =>
    waitFor(() => allOn(image, ids) || undefined, what, timeoutMs, 200);

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

  /** Runs a step and prints each node's recent rollout log and every node's Pods when it fails. */
  const step = explainingSteps(
    () =>
      recentOutput(started, 25, (l) => /rollout|admit|halt|reconcile|error/i.test(l)) +
      `\n--- pods ---\n${JSON.stringify(Object.fromEntries(nodes().map((n) => [n.id, podsOf(n.id)])))}`,
  );

  beforeAll(async () => {
    cluster = createAgentCluster(3, `${NETNS_PREFIX}r${process.pid}-`);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-rollout-'));
    ({ objects, setup } = await sharedLocalBucket(work, CLUSTER));
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
    await step(async () => {
      await untilAllOn('registry.podmin.internal/apps/web:v1', 'every node on v1', 60_000);
    });
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
      await untilAllOn(image, 'every node on v2', 120_000);
      const seen = sampler.stop();
      expect(seen.samples).toBeGreaterThan(50);
      expect(seen.maxUnavailable).toBe(1);
      expect(seen.maxDouble).toBe(0);
      const state = await rolloutState();
      expect(Object.keys(state?.deployments['default/web']?.admitted ?? {}).sort()).toEqual(
        nodeIds().sort(),
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
      await untilAllOn('registry.podmin.internal/apps/web:v2', 'every node back on v2', 60_000);
      // A few more polls: nobody else moves once halted.
      await new Promise((r) => setTimeout(r, 4_000));
      const seen = sampler.stop();
      expect([...seen.ran]).toEqual([halted.node]);
      expect(seen.maxUnavailable).toBeLessThanOrEqual(1);
      expect(allOn('registry.podmin.internal/apps/web:v2')).toBe(true);
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
      const survivors = nodeIds().filter((id) => id !== leader);
      await untilAllOn(image, 'the survivors on v4', 120_000, survivors);
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
