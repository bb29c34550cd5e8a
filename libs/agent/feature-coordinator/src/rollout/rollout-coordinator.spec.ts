import {
  InMemoryObjectStore,
  commitDesiredState,
  rollingDaemonSetManifest,
  type TestRollingDaemonSet,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  ROLLOUT_STATE_KEY,
  parseRolloutState,
  type NodeDeploymentReport,
} from '@podmin/util-rollout';
import type { DesiredIndex } from '@podmin/util-desired-state';
import { RecordingLog } from '../__fixtures__/recording-log';
import { RolloutCoordinator } from './rollout-coordinator';

/** How many nodes a rollout may add, and take away, at once. */
type Strategy = Pick<TestRollingDaemonSet, 'maxSurge' | 'maxUnavailable'>;

/** Commits DaemonSet `web` on image `web:<tag>`, one node at a time unless `strategy` says otherwise. */
async function deploy(
  store: InMemoryObjectStore,
  tag: string,
  strategy: Strategy = { maxSurge: 0, maxUnavailable: 1 },
): Promise<DesiredIndex> {
  const manifest = rollingDaemonSetManifest({
    namespace: 'default',
    image: `web:${tag}`,
    ...strategy,
  });
  return commitDesiredState(store, {
    deploy: [buildDeployment(manifest, { source: 'test', name: 'web', nodegroup: 'default' })],
  });
}

/** A token of a term that holds, or has ended. */
const token = (valid = true) => ({
  assertValid(doing: string): void {
    if (!valid) throw new Error(`${doing}: not the leader`);
  },
});

function leader(store: InMemoryObjectStore, clock: { ms: number }, nodeId = 'n1') {
  const log = new RecordingLog();
  const rollouts = new RolloutCoordinator(
    {
      store,
      monotonic: { nowMs: () => clock.ms },
      wall: () => new Date(Date.UTC(2026, 11, 3) + clock.ms),
      log,
    },
    { nodeId, nodegroup: 'default', leaseMs: 10_000, settleMs: 1_000 },
  );
  return { rollouts, log };
}

const runs = (deployment: string, pod: string, available = true): NodeDeploymentReport => ({
  deployment,
  pods: [{ pod, available }],
  failed: null,
});

describe('RolloutCoordinator', () => {
  it('admits in waves after the settle time, records admissions by compare-and-swap, and a successor honours them', async () => {
    const store = new InMemoryObjectStore();
    const clock = { ms: 0 };
    const v1 = (await deploy(store, 'v1'))['default/web']!.pod;
    const v2 = (await deploy(store, 'v2'))['default/web']!.pod;
    const entries = await deploy(store, 'v2');
    const { rollouts, log } = leader(store, clock);
    rollouts.startTerm();
    rollouts.sync([runs('default/web', v1)], [], 'etag');
    for (const id of ['n2', 'n3']) rollouts.record(id, 'default', [runs('default/web', v1)]);
    const signal = new AbortController().signal;
    // Nobody is admitted before every node had time to be heard.
    await rollouts.plan(token(), entries, signal);
    expect(rollouts.admissions(true).admissions).toEqual([]);
    clock.ms = 1_000;
    await rollouts.plan(token(), entries, signal);
    // maxUnavailable 1 of 3: the lowest id first.
    expect(rollouts.admissions(true).admissions).toEqual([
      { deployment: 'default/web', target: v2, attempt: 1, admitted: true, halted: false },
    ]);
    expect(rollouts.answerFor('n2')).toEqual([expect.objectContaining({ admitted: false })]);
    const stored = parseRolloutState((await store.get(ROLLOUT_STATE_KEY)).body);
    expect(Object.keys(stored.deployments['default/web']!.admitted)).toEqual(['n1']);
    expect(log.messages()).toContain('admit node');

    // A new leader reads the state: n1 stays admitted, nobody else while n1 is unavailable.
    const next = leader(store, clock, 'n2');
    next.rollouts.startTerm();
    next.rollouts.sync([runs('default/web', v1)], [], 'etag');
    next.rollouts.record('n1', 'default', [runs('default/web', v2, false)]);
    next.rollouts.record('n3', 'default', [runs('default/web', v1)]);
    clock.ms = 2_000;
    await next.rollouts.plan(token(), entries, signal);
    expect(next.rollouts.answerFor('n1')).toEqual([expect.objectContaining({ admitted: true })]);
    expect(next.rollouts.admissions(true).admissions).toEqual([
      expect.objectContaining({ admitted: false }),
    ]);
    // n1 available on the target: the next wave.
    next.rollouts.record('n1', 'default', [runs('default/web', v2)]);
    await next.rollouts.plan(token(), entries, signal);
    expect(next.rollouts.admissions(true).admissions).toEqual([
      expect.objectContaining({ admitted: true }),
    ]);
  });

  it('halts on a node that gave the target up, and writes nothing once the term ended', async () => {
    const store = new InMemoryObjectStore();
    const clock = { ms: 5_000 };
    const v1 = (await deploy(store, 'v1', { maxSurge: 1, maxUnavailable: 0 }))['default/web']!.pod;
    const entries = await deploy(store, 'v2', { maxSurge: 1, maxUnavailable: 0 });
    const v2 = entries['default/web']!.pod;
    const { rollouts, log } = leader(store, clock);
    rollouts.startTerm();
    clock.ms += 1_000;
    rollouts.sync(
      [
        {
          deployment: 'default/web',
          pods: [{ pod: v1, available: true }],
          failed: { pod: v2, attempt: 1, reason: 'ErrImagePull' },
        },
      ],
      [],
      'etag',
    );
    rollouts.record('n2', 'default', [runs('default/web', v1)]);
    const signal = new AbortController().signal;
    await rollouts.plan(token(), entries, signal);
    const state = parseRolloutState((await store.get(ROLLOUT_STATE_KEY)).body);
    expect(state.deployments['default/web']!.halted).toMatchObject({
      node: 'n1',
      reason: 'ErrImagePull',
    });
    expect(rollouts.answerFor('n2')).toEqual([
      expect.objectContaining({ admitted: false, halted: true }),
    ]);
    expect(log.messages()).toContain('halt rollout');

    // A deposed leader's plan is refused before it writes.
    const other = new InMemoryObjectStore();
    const otherEntries = await deploy(other, 'v2');
    const deposed = leader(other, clock);
    deposed.rollouts.startTerm();
    clock.ms += 1_000;
    await expect(deposed.rollouts.plan(token(false), otherEntries, signal)).rejects.toThrow(
      /not the leader/,
    );
    await expect(Promise.resolve().then(() => other.get(ROLLOUT_STATE_KEY))).rejects.toMatchObject({
      code: 'OBJECT_NOT_FOUND',
    });
  });

  it('leaves a draining Pod in the backends until its replacement is Ready', () => {
    const store = new InMemoryObjectStore();
    const { rollouts } = leader(store, { ms: 0 });
    const pod = (revision: string, address: string) => ({
      namespace: 'default',
      pod: `web-${revision}`,
      labels: { app: 'web' },
      address,
      revision,
    });
    rollouts.sync([], [{ namespace: 'default', revision: 'r1', replacementRevision: 'r2' }], '');
    expect(rollouts.withoutDraining([pod('r1', '::1')]).map((p) => p.revision)).toEqual(['r1']);
    expect(
      rollouts.withoutDraining([pod('r1', '::1'), pod('r2', '::2')]).map((p) => p.revision),
    ).toEqual(['r2']);
    rollouts.sync([], [{ namespace: 'default', revision: 'r1', replacementRevision: '' }], '');
    expect(rollouts.withoutDraining([pod('r1', '::1')])).toEqual([]);
  });

  it('answers no admissions on a follower that has not heard a leader within the lease', () => {
    const clock = { ms: 0 };
    const { rollouts } = leader(new InMemoryObjectStore(), clock);
    expect(rollouts.admissions(false)).toEqual({ admissions: [], leaderKnown: false });
    rollouts.takeAnswer([
      { deployment: 'default/web', target: 'x', attempt: 1, admitted: true, halted: false },
    ]);
    expect(rollouts.admissions(false).leaderKnown).toBe(true);
    clock.ms = 10_001;
    expect(rollouts.admissions(false)).toEqual({ admissions: [], leaderKnown: false });
  });
});
