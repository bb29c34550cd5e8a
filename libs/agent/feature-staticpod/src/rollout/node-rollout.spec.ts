import { DEFAULT_STRATEGY, type Admission, type RolloutStrategy } from '@podmin/util-rollout';
import {
  NodeRollouts,
  revisionOf,
  surgeName,
  type DecisionInput,
  type SlotHealth,
} from './node-rollout';

const KEY = 'default/web';
const v1 = { pod: `nodegroups/default/pods/sha512/${'1'.repeat(128)}.yaml`, service: undefined };
const v2 = { pod: `nodegroups/default/pods/sha512/${'2'.repeat(128)}.yaml`, service: undefined };
const SURGE: RolloutStrategy = { ...DEFAULT_STRATEGY, maxSurge: 1, maxUnavailable: 0 };
const REPLACE: RolloutStrategy = DEFAULT_STRATEGY;
const DRAIN = 100;

/** Health by revision: `ready` revisions are Ready and available, the rest are not. */
function health(ready: Set<string>, reason: string | null = null) {
  return (revision: string): SlotHealth => ({
    ready: ready.has(revision),
    available: ready.has(revision),
    reason: ready.has(revision) ? null : reason,
  });
}

function admit(target = v2.pod, over: Partial<Admission> = {}): Admission {
  return { deployment: KEY, target, attempt: 1, admitted: true, halted: false, ...over };
}

function input(over: Partial<DecisionInput>): DecisionInput {
  return {
    name: 'web',
    target: v2,
    strategy: SURGE,
    admission: undefined,
    gated: true,
    health: health(new Set()),
    nowMs: 0,
    ...over,
  };
}

/** A node that runs v1, available. */
function runningV1(): NodeRollouts {
  const rollouts = new NodeRollouts(DRAIN);
  rollouts.decide(KEY, input({ target: v1 }));
  return rollouts;
}

const names = (slots: ReadonlyArray<{ staticName: string; pod: string }>) =>
  slots.map((s) => `${s.staticName}@${s.pod === v1.pod ? 'v1' : 'v2'}`);

describe('NodeRollouts', () => {
  const r1 = revisionOf(v1);
  const r2 = revisionOf(v2);

  it('starts the target at once on a node without a Pod of the deployment', () => {
    const rollouts = new NodeRollouts(DRAIN);
    expect(names(rollouts.decide(KEY, input({})))).toEqual(['web@v2']);
  });

  it('keeps the revision it runs until the leader admits it, and without a leader', () => {
    const rollouts = runningV1();
    const ready = health(new Set([r1]));
    expect(names(rollouts.decide(KEY, input({ health: ready })))).toEqual(['web@v1']);
    const notAdmitted = admit(v2.pod, { admitted: false });
    expect(names(rollouts.decide(KEY, input({ health: ready, admission: notAdmitted })))).toEqual([
      'web@v1',
    ]);
    // An admission for another target (the leader's stale view) is no admission.
    expect(names(rollouts.decide(KEY, input({ health: ready, admission: admit(v1.pod) })))).toEqual(
      ['web@v1'],
    );
    expect(rollouts.active(KEY, { target: v2, gated: true, health: ready })).toBe(true);
  });

  it('surges: the target beside the old Pod, the old one drains once the new is available, then goes', () => {
    const rollouts = runningV1();
    const onlyOld = health(new Set([r1]));
    const both = health(new Set([r1, r2]));
    const surge = rollouts.decide(KEY, input({ health: onlyOld, admission: admit(), nowMs: 10 }));
    expect(names(surge)).toEqual(['web@v1', `${surgeName('web', r2)}@v2`]);
    // New not yet available: both stay, nothing drains.
    expect(
      names(rollouts.decide(KEY, input({ health: onlyOld, admission: admit(), nowMs: 20 }))),
    ).toHaveLength(2);
    expect(rollouts.drains(KEY)).toEqual([]);
    // Available: the old Pod leaves the backends (replaced by the new revision) but stays published.
    expect(
      names(rollouts.decide(KEY, input({ health: both, admission: admit(), nowMs: 30 }))),
    ).toHaveLength(2);
    expect(rollouts.drains(KEY)).toEqual([{ revision: r1, replacement: r2 }]);
    expect(rollouts.report(KEY, true, both).pods).toEqual([
      { pod: v1.pod, available: true },
      { pod: v2.pod, available: true },
    ]);
    // After the drain it is gone; the surge Pod keeps its name.
    const after = rollouts.decide(
      KEY,
      input({ health: both, admission: admit(), nowMs: 30 + DRAIN }),
    );
    expect(names(after)).toEqual([`${surgeName('web', r2)}@v2`]);
    expect(rollouts.drains(KEY)).toEqual([]);
    expect(rollouts.active(KEY, { target: v2, gated: true, health: both })).toBe(false);
  });

  it('names the next surge Pod after the Pod itself again, so names alternate', () => {
    const rollouts = new NodeRollouts(DRAIN);
    rollouts.adopt(KEY, [{ ...v1, staticName: surgeName('web', r1), revision: r1, sinceMs: 0 }]);
    const slots = rollouts.decide(
      KEY,
      input({ health: health(new Set([r1])), admission: admit() }),
    );
    expect(names(slots)).toEqual([`${surgeName('web', r1)}@v1`, 'web@v2']);
  });

  it('gives a surge up after the progress deadline: the new Pod goes, the failure is reported, it is not retried', () => {
    const rollouts = runningV1();
    const onlyOld = health(new Set([r1]), 'ErrImagePull (container web): not found');
    const strategy = { ...SURGE, progressDeadlineSeconds: 1 };
    rollouts.decide(KEY, input({ strategy, health: onlyOld, admission: admit(), nowMs: 0 }));
    const late = rollouts.decide(
      KEY,
      input({ strategy, health: onlyOld, admission: admit(), nowMs: 1001 }),
    );
    expect(names(late)).toEqual(['web@v1']);
    expect(rollouts.report(KEY, true, onlyOld).failed).toEqual({
      pod: v2.pod,
      attempt: 1,
      reason: 'ErrImagePull (container web): not found',
    });
    expect(rollouts.failure(KEY)).toMatch(
      /^rollout to 222222222222 failed on this node, back on the previous Pod: ErrImagePull/,
    );
    // Still admitted in the same attempt: it stays back.
    expect(
      names(
        rollouts.decide(KEY, input({ strategy, health: onlyOld, admission: admit(), nowMs: 2000 })),
      ),
    ).toEqual(['web@v1']);
    // A resumed rollout (next attempt) tries again.
    const retry = rollouts.decide(
      KEY,
      input({ strategy, health: onlyOld, admission: admit(v2.pod, { attempt: 2 }), nowMs: 3000 }),
    );
    expect(names(retry)).toHaveLength(2);
    // Another target: the old failure is no longer this node's story.
    rollouts.decide(KEY, input({ target: v1, strategy, health: onlyOld, nowMs: 4000 }));
    expect(rollouts.failure(KEY)).toBeNull();
  });

  it('removes a surge Pod at once when the rollout halts elsewhere', () => {
    const rollouts = runningV1();
    const onlyOld = health(new Set([r1]));
    rollouts.decide(KEY, input({ health: onlyOld, admission: admit() }));
    const halted = rollouts.decide(
      KEY,
      input({ health: onlyOld, admission: admit(v2.pod, { halted: true }), nowMs: 5 }),
    );
    expect(names(halted)).toEqual(['web@v1']);
    expect(rollouts.report(KEY, true, onlyOld).failed).toBeNull();
  });

  it('replaces in place without surge: the old Pod drains first, then the target takes its name', () => {
    const rollouts = runningV1();
    const onlyOld = health(new Set([r1]));
    const first = rollouts.decide(
      KEY,
      input({ strategy: REPLACE, health: onlyOld, admission: admit(), nowMs: 0 }),
    );
    expect(names(first)).toEqual(['web@v1']);
    expect(rollouts.drains(KEY)).toEqual([{ revision: r1, replacement: '' }]);
    const replaced = rollouts.decide(
      KEY,
      input({ strategy: REPLACE, health: onlyOld, admission: admit(), nowMs: DRAIN }),
    );
    expect(names(replaced)).toEqual(['web@v2']);
  });

  it('goes back to the previous Pod when a replacement is not available in time', () => {
    const rollouts = runningV1();
    const strategy = { ...REPLACE, progressDeadlineSeconds: 1 };
    const none = health(new Set(), 'CrashLoopBackOff (container web)');
    rollouts.decide(KEY, input({ strategy, health: none, admission: admit(), nowMs: 0 }));
    expect(
      names(rollouts.decide(KEY, input({ strategy, health: none, admission: admit(), nowMs: 10 }))),
    ).toEqual(['web@v2']);
    const back = rollouts.decide(
      KEY,
      input({ strategy, health: none, admission: admit(), nowMs: 1100 }),
    );
    expect(names(back)).toEqual(['web@v1']);
    expect(rollouts.report(KEY, true, none).failed?.reason).toBe(
      'CrashLoopBackOff (container web)',
    );
  });

  it('never moves an OnDelete deployment that has a Pod', () => {
    const rollouts = runningV1();
    const strategy: RolloutStrategy = { ...DEFAULT_STRATEGY, type: 'OnDelete' };
    expect(names(rollouts.decide(KEY, input({ strategy, admission: admit() })))).toEqual([
      'web@v1',
    ]);
  });

  it('replaces at once without gating (no kubelet to tell readiness)', () => {
    const rollouts = runningV1();
    expect(names(rollouts.decide(KEY, input({ gated: false })))).toEqual(['web@v2']);
    expect(rollouts.report(KEY, false, health(new Set())).pods).toEqual([
      { pod: v2.pod, available: true },
    ]);
  });

  it('keeps serving the Pod a finished surge brought when the next target comes while the old one still drains', () => {
    const rollouts = runningV1();
    const both = health(new Set([r1, r2]));
    rollouts.decide(KEY, input({ health: health(new Set([r1])), admission: admit(), nowMs: 10 }));
    rollouts.decide(KEY, input({ health: both, admission: admit(), nowMs: 30 }));
    expect(rollouts.drains(KEY)).toEqual([{ revision: r1, replacement: r2 }]);
    const v3 = {
      pod: `nodegroups/default/pods/sha512/${'3'.repeat(128)}.yaml`,
      service: undefined,
    };
    const r3 = revisionOf(v3);
    const label = (s: { staticName: string; revision: string }) =>
      `${s.staticName}@${{ [r1]: 'v1', [r2]: 'v2', [r3]: 'v3' }[s.revision]}`;
    // Not admitted yet: v1 finishes its drain, v2 stays in the backends (it never drains).
    const waiting = rollouts.decide(KEY, input({ target: v3, health: both, nowMs: 40 }));
    expect(waiting.map(label)).toEqual(['web@v1', `${surgeName('web', r2)}@v2`]);
    expect(rollouts.drains(KEY)).toEqual([{ revision: r1, replacement: r2 }]);
    // Admitted while v1 still drains under the Pod's own name: the surge Pod takes a free name.
    const surged = rollouts.decide(
      KEY,
      input({ target: v3, health: both, admission: admit(v3.pod), nowMs: 50 }),
    );
    expect(surged.map(label)).toEqual([
      'web@v1',
      `${surgeName('web', r2)}@v2`,
      `${surgeName('web', r3)}@v3`,
    ]);
    expect(new Set(surged.map((s) => s.staticName)).size).toBe(3);
    expect(rollouts.drains(KEY)).toEqual([{ revision: r1, replacement: r2 }]);
    // Given up after the deadline (v1's drain over by then): the surge Pod goes, v2 stays.
    const strategy = { ...SURGE, progressDeadlineSeconds: 1 };
    const givenUp = rollouts.decide(
      KEY,
      input({ target: v3, strategy, health: both, admission: admit(v3.pod), nowMs: 1051 }),
    );
    expect(givenUp.map(label)).toEqual([`${surgeName('web', r2)}@v2`]);
    expect(rollouts.drains(KEY)).toEqual([]);
  });

  it('drops a half-done surge Pod when the target moves on, keeping the available one', () => {
    const rollouts = runningV1();
    const onlyOld = health(new Set([r1]));
    rollouts.decide(KEY, input({ health: onlyOld, admission: admit() }));
    const v3 = {
      pod: `nodegroups/default/pods/sha512/${'3'.repeat(128)}.yaml`,
      service: undefined,
    };
    const next = rollouts.decide(KEY, input({ target: v3, health: onlyOld, nowMs: 1 }));
    expect(names(next)).toEqual(['web@v1']);
  });
});
