import { PodminError } from '@podmin/util-errors';
import {
  HALT_BACKSTOP_SECONDS,
  planRollouts,
  type LiveNode,
  type PlanInput,
  type PlanResult,
  type PlannedDeployment,
} from './planner';
import type { FailedTarget, NodeDeploymentReport } from './report';
import {
  EMPTY_ROLLOUT_STATE,
  newRollout,
  parseRolloutState,
  serializeRolloutState,
  type DeploymentRollout,
  type RolloutState,
} from './state';
import { DEFAULT_STRATEGY, resolveLimits, type RolloutStrategy } from './strategy';

const T0 = new Date('2025-01-01T00:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
const KEY = 'default/web';
const OLD = 'pods/web-v1';
const V2 = 'pods/web-v2';

const strategy = (over: Partial<RolloutStrategy> = {}): RolloutStrategy => ({
  ...DEFAULT_STRATEGY,
  ...over,
});
const deployment = (
  over: Partial<RolloutStrategy> = {},
  target = V2,
  key = KEY,
  nodegroup = 'default',
): PlannedDeployment => ({ key, nodegroup, target, strategy: strategy(over) });

const id = (i: number): string => `n${String(i).padStart(4, '0')}`;

/** A live node running `pods` (`[pod, available]`) of the deployment `key`. */
function node(
  nodeId: string,
  pods: ReadonlyArray<readonly [string, boolean]>,
  extra: { failed?: FailedTarget; nodegroup?: string; key?: string } = {},
): LiveNode {
  const reports: NodeDeploymentReport[] =
    pods.length === 0 && extra.failed === undefined
      ? []
      : [
          {
            deployment: extra.key ?? KEY,
            pods: pods.map(([pod, available]) => ({ pod, available })),
            failed: extra.failed ?? null,
          },
        ];
  return { id: nodeId, nodegroup: extra.nodegroup ?? 'default', reports };
}
/** `count` nodes running the old Pod, available. */
const oldFleet = (count: number, first = 0): LiveNode[] =>
  Array.from({ length: count }, (_, i) => node(id(first + i), [[OLD, true]]));

const stateOf = (entry: DeploymentRollout, key = KEY): RolloutState => ({
  schema: 1,
  deployments: { [key]: entry },
});
const entryOf = (result: PlanResult, key = KEY): DeploymentRollout => {
  const entry = result.state.deployments[key];
  if (entry === undefined) throw new Error(`no entry for ${key}`);
  return entry;
};
const admittedIds = (result: PlanResult, key = KEY): string[] =>
  Object.keys(entryOf(result, key).admitted).sort();
const nowIds = (result: PlanResult): string[] => result.admittedNow.map((a) => a.node);

const plan = (over: Partial<PlanInput> & Pick<PlanInput, 'nodes'>): PlanResult =>
  planRollouts({
    deployments: [deployment()],
    state: EMPTY_ROLLOUT_STATE,
    now: T0,
    ...over,
  });

describe('planRollouts: wave arithmetic', () => {
  it.each([
    ['10%', 1000, 100],
    ['10%', 5, 1],
    ['25%', 3, 1],
    ['30%', 10, 3],
    ['33%', 10, 4],
    ['100%', 7, 7],
    [3, 10, 3],
    [1, 10, 1],
    [20, 10, 10],
  ] as const)(
    'maxUnavailable %p of %p nodes admits %p in the first wave, lowest ids first',
    (maxUnavailable, total, want) => {
      const result = plan({
        deployments: [deployment({ maxUnavailable })],
        nodes: oldFleet(total),
      });
      expect(nowIds(result)).toEqual(Array.from({ length: want }, (_, i) => id(i)));
      expect(admittedIds(result)).toEqual(nowIds(result));
    },
  );

  it.each([
    ['10%', 1000, 100],
    ['10%', 5, 1],
    ['25%', 3, 1],
    [2, 10, 2],
  ] as const)('maxSurge %p of %p nodes admits %p in the first wave', (maxSurge, total, want) => {
    const result = plan({
      deployments: [deployment({ maxUnavailable: 0, maxSurge })],
      nodes: oldFleet(total),
    });
    expect(result.admittedNow).toHaveLength(want);
  });

  it('moves one node at a time when both limits are 0 (the fencepost)', () => {
    const result = plan({
      deployments: [deployment({ maxUnavailable: 0, maxSurge: 0 })],
      nodes: oldFleet(4),
    });
    expect(nowIds(result)).toEqual([id(0)]);
  });

  it('counts only the live nodes of the deployment NodeGroup', () => {
    const others = Array.from({ length: 90 }, (_, i) =>
      node(`x${i}`, [[OLD, true]], { nodegroup: 'other' }),
    );
    const result = plan({
      deployments: [deployment({ maxUnavailable: '10%' })],
      nodes: [...oldFleet(10), ...others],
    });
    // 10% of 10, not of 100.
    expect(nowIds(result)).toEqual([id(0)]);
    expect(result.admissions.get('x0')).toEqual([]);
  });

  it('admits the next nodes as earlier ones become available, never twice', () => {
    const d = deployment({ maxUnavailable: 2 });
    const first = plan({ deployments: [d], nodes: oldFleet(5) });
    expect(nowIds(first)).toEqual([id(0), id(1)]);
    // n0 is available on the target, n1 still starting: one slot is free.
    const nodes = [node(id(0), [[V2, true]]), node(id(1), [[V2, false]]), ...oldFleet(3, 2)];
    const second = plan({ deployments: [d], state: first.state, nodes, now: at(10) });
    expect(nowIds(second)).toEqual([id(2)]);
    expect(entryOf(second).admitted).toEqual({
      [id(0)]: T0.toISOString(),
      [id(1)]: T0.toISOString(),
      [id(2)]: at(10).toISOString(),
    });
    // Nothing new is known: nothing changes, nobody is admitted again.
    const third = plan({ deployments: [d], state: second.state, nodes, now: at(20) });
    expect(third.admittedNow).toEqual([]);
    expect(third.changed).toBe(false);
    expect(third.state).toEqual(second.state);
  });

  it('counts an admitted node whose report still shows its old Pod as unavailable', () => {
    const d = deployment({ maxUnavailable: 1 });
    const first = plan({ deployments: [d], nodes: oldFleet(3) });
    const second = plan({ deployments: [d], state: first.state, nodes: oldFleet(3), now: at(2) });
    expect(second.admittedNow).toEqual([]);
    expect(entryOf(second).admitted).toEqual({ [id(0)]: T0.toISOString() });
  });
});

describe('planRollouts: nodes joining and leaving', () => {
  it('resolves a percentage against the live nodes of each pass', () => {
    const d = deployment({ maxUnavailable: '10%' });
    const first = plan({ deployments: [d], nodes: oldFleet(10) });
    expect(nowIds(first)).toEqual([id(0)]);
    // Ten more nodes join: 10% of 20 is 2, and n0 is still starting.
    const second = plan({ deployments: [d], state: first.state, nodes: oldFleet(20), now: at(5) });
    expect(nowIds(second)).toEqual([id(1)]);
    // Ten leave, among them the admitted n1, and n0099 joins: 10% of 11 is 2, n0 is unavailable.
    const remaining = oldFleet(20).filter((n) => n.id !== id(1) && n.id < id(11));
    expect(remaining).toHaveLength(10);
    const third = plan({
      deployments: [d],
      state: second.state,
      nodes: [...remaining, node('n0099', [[OLD, true]])],
      now: at(10),
    });
    expect(nowIds(third)).toEqual([id(2)]);
    // The admission of the node that left stays: it is never admitted twice.
    expect(admittedIds(third)).toEqual([id(0), id(1), id(2)]);
    expect(third.admissions.has(id(1))).toBe(false);
  });

  it('frees a slot when an admitted node leaves, and keeps its admission for its return', () => {
    const d = deployment({ maxUnavailable: 1 });
    const first = plan({ deployments: [d], nodes: oldFleet(3) });
    const without = plan({
      deployments: [d],
      state: first.state,
      nodes: oldFleet(2, 1),
      now: at(5),
    });
    expect(nowIds(without)).toEqual([id(1)]);
    const back = plan({ deployments: [d], state: without.state, nodes: oldFleet(3), now: at(10) });
    expect(back.admittedNow).toEqual([]);
    expect(back.admissions.get(id(0))?.[0]?.admitted).toBe(true);
    expect(entryOf(back).admitted[id(0)]).toBe(T0.toISOString());
  });

  it('lets a joining node without a Pod start the target by itself, counting it unavailable', () => {
    const d = deployment({ maxUnavailable: 2 });
    const nodes = [...oldFleet(4), node('n9999', [])];
    const result = plan({ deployments: [d], nodes });
    expect(nowIds(result)).toEqual([id(0)]);
    expect(result.admissions.get('n9999')).toEqual([
      { deployment: KEY, target: V2, attempt: 1, admitted: false, halted: false },
    ]);
  });

  it('does not count a node without a Pod as surging', () => {
    const d = deployment({ maxUnavailable: 0, maxSurge: 1 });
    const result = plan({ deployments: [d], nodes: [...oldFleet(2), node('n9999', [])] });
    expect(nowIds(result)).toEqual([id(0)]);
  });
});

describe('planRollouts: nodes whose old Pod is down', () => {
  const nodes = (): LiveNode[] =>
    oldFleet(10).map((n, i) => (i === 3 || i === 7 ? node(n.id, [[OLD, false]]) : n));

  it('replaces them at once without surge, and they use up maxUnavailable', () => {
    const result = plan({ deployments: [deployment({ maxUnavailable: 1 })], nodes: nodes() });
    expect(nowIds(result)).toEqual([id(3), id(7)]);
    const wider = plan({ deployments: [deployment({ maxUnavailable: 3 })], nodes: nodes() });
    expect(nowIds(wider)).toEqual([id(3), id(7), id(0)]);
  });

  it('replaces them at once with surge, outside the surge count', () => {
    const result = plan({
      deployments: [deployment({ maxUnavailable: 0, maxSurge: 1 })],
      nodes: nodes(),
    });
    expect(nowIds(result)).toEqual([id(3), id(7), id(0)]);
    // Next pass: the replacements now count as surging until their new Pod is available.
    const next = plan({
      deployments: [deployment({ maxUnavailable: 0, maxSurge: 3 })],
      state: result.state,
      nodes: nodes(),
      now: at(5),
    });
    expect(next.admittedNow).toEqual([]);
  });
});

describe('planRollouts: nodes only just reported down', () => {
  it('counts them as unavailable but does not move them until their report has settled', () => {
    const fleet = oldFleet(3).map((n, i) =>
      i < 2 ? { ...node(n.id, [[OLD, false]]), unsettled: new Set([KEY]) } : n,
    );
    // Two nodes may be starting their old Pod (a lagging report): nobody moves.
    const result = plan({ deployments: [deployment({ maxUnavailable: 1 })], nodes: fleet });
    expect(result.admittedNow).toEqual([]);
    // Settled (still down): replaced at once, as Kubernetes does.
    const settled = plan({
      deployments: [deployment({ maxUnavailable: 1 })],
      nodes: fleet.map((n) => ({ ...n, unsettled: new Set<string>() })),
    });
    expect(nowIds(settled)).toEqual([id(0), id(1)]);
  });
});

describe('planRollouts: surge', () => {
  const d = deployment({ maxUnavailable: 0, maxSurge: 2 });

  it('counts admitted or target-running nodes whose target is not yet available', () => {
    const first = plan({ deployments: [d], nodes: oldFleet(6) });
    expect(nowIds(first)).toEqual([id(0), id(1)]);
    const nodes = [
      node(id(0), [[V2, true]]), // done: the old Pod is gone
      node(id(1), [
        [OLD, true],
        [V2, false],
      ]),
      ...oldFleet(4, 2),
    ];
    const second = plan({ deployments: [d], state: first.state, nodes, now: at(10) });
    expect(nowIds(second)).toEqual([id(2)]);
    // A node already running the target unadmitted (it had none) and not available counts too.
    const third = plan({
      deployments: [d],
      state: second.state,
      nodes: [...nodes.slice(0, 5), node(id(5), [[V2, false]])],
      now: at(20),
    });
    expect(third.admittedNow).toEqual([]);
  });

  it('does not count a node whose new Pod is available beside the old one', () => {
    const first = plan({ deployments: [d], nodes: oldFleet(4) });
    const nodes = [
      node(id(0), [
        [OLD, true],
        [V2, true],
      ]),
      node(id(1), [[V2, true]]),
      ...oldFleet(2, 2),
    ];
    const second = plan({ deployments: [d], state: first.state, nodes, now: at(10) });
    expect(nowIds(second)).toEqual([id(2), id(3)]);
  });
});

describe('planRollouts: halts', () => {
  const failed = (reason: string, attempt = 1, pod = V2): FailedTarget => ({
    pod,
    attempt,
    reason,
  });

  it('halts on a failed report of the current attempt, lowest id first, and stops admitting', () => {
    const d = deployment({ maxUnavailable: 2 });
    const first = plan({ deployments: [d], nodes: oldFleet(6) });
    const nodes = [
      node(id(0), [[OLD, true]], { failed: failed('ImagePullBackOff') }),
      node(id(1), [[OLD, true]], { failed: failed('CrashLoopBackOff') }),
      ...oldFleet(4, 2),
    ];
    const result = plan({ deployments: [d], state: first.state, nodes, now: at(300) });
    const halt = { node: id(0), reason: 'ImagePullBackOff', time: at(300).toISOString() };
    expect(result.halted).toEqual([{ deployment: KEY, halt }]);
    expect(entryOf(result).halted).toEqual(halt);
    expect(result.admittedNow).toEqual([]);
    expect(result.changed).toBe(true);
    for (const n of nodes) expect(result.admissions.get(n.id)?.[0]?.halted).toBe(true);
    // Admissions stay; a halted rollout is not halted again.
    expect(admittedIds(result)).toEqual([id(0), id(1)]);
    const later = plan({ deployments: [d], state: result.state, nodes, now: at(400) });
    expect(later.halted).toEqual([]);
    expect(later.changed).toBe(false);
    expect(entryOf(later).halted).toEqual(halt);
  });

  it('ignores failures of an earlier attempt or another Pod', () => {
    const d = deployment({ maxUnavailable: 1 });
    const state = stateOf({ ...newRollout(V2), attempt: 2 });
    const nodes = [
      node(id(0), [[OLD, true]], { failed: failed('old attempt', 1) }),
      node(id(1), [[OLD, true]], { failed: failed('other pod', 2, 'pods/web-v0') }),
      ...oldFleet(2, 2),
    ];
    const result = plan({ deployments: [d], state, nodes });
    expect(result.halted).toEqual([]);
    // The node that failed attempt 1 may try again in attempt 2.
    expect(nowIds(result)).toEqual([id(0)]);
  });

  it('halts on a failure of a node that started the target by itself', () => {
    const nodes = [node(id(0), [], { failed: failed('ErrImagePull') }), ...oldFleet(3, 1)];
    const result = plan({ deployments: [deployment({ maxUnavailable: 5 })], nodes });
    expect(result.halted.map((h) => h.halt.node)).toEqual([id(0)]);
    expect(result.admittedNow).toEqual([]);
  });

  it('halts through the backstop once an admitted node is long past the progress deadline', () => {
    const d = deployment({ maxUnavailable: 2, progressDeadlineSeconds: 300 });
    const first = plan({ deployments: [d], nodes: oldFleet(4) });
    const nodes = [node(id(0), [[V2, true]]), node(id(1), [[V2, false]]), ...oldFleet(2, 2)];
    const limit = 300 + HALT_BACKSTOP_SECONDS;
    const before = plan({ deployments: [d], state: first.state, nodes, now: at(limit) });
    expect(before.halted).toEqual([]);
    const after = plan({ deployments: [d], state: before.state, nodes, now: at(limit + 1) });
    expect(after.halted).toEqual([
      {
        deployment: KEY,
        halt: {
          node: id(1),
          reason: 'no available Pod within 5m0s of its admission',
          time: at(limit + 1).toISOString(),
        },
      },
    ]);
    expect(after.admittedNow).toEqual([]);
  });

  it('leaves the backstop to live nodes', () => {
    const d = deployment({ maxUnavailable: 1, progressDeadlineSeconds: 60 });
    const first = plan({ deployments: [d], nodes: oldFleet(3) });
    const result = plan({
      deployments: [d],
      state: first.state,
      nodes: oldFleet(2, 1),
      now: at(3600),
    });
    expect(result.halted).toEqual([]);
    expect(nowIds(result)).toEqual([id(1)]);
  });

  it('writes a reason the strict parse reads back when a node reports none', () => {
    const nodes = [node(id(0), [[OLD, true]], { failed: failed('') }), ...oldFleet(1, 1)];
    const result = plan({ nodes });
    expect(entryOf(result).halted?.reason).toBe('no reason given');
    expect(parseRolloutState(serializeRolloutState(result.state))).toEqual(result.state);
  });
});

describe('planRollouts: pause, OnDelete, retarget', () => {
  it('admits nobody while paused; admitted nodes keep their admission', () => {
    const d = deployment({ maxUnavailable: 2 });
    const first = plan({ deployments: [d], nodes: oldFleet(5) });
    const paused = stateOf({ ...entryOf(first), paused: true });
    const nodes = [node(id(0), [[V2, true]]), node(id(1), [[V2, true]]), ...oldFleet(3, 2)];
    const result = plan({ deployments: [d], state: paused, nodes, now: at(30) });
    expect(result.admittedNow).toEqual([]);
    expect(result.changed).toBe(false);
    expect(result.admissions.get(id(0))?.[0]?.admitted).toBe(true);
    expect(result.admissions.get(id(2))?.[0]?.admitted).toBe(false);
    // Resumed (pause cleared): admissions go on.
    const resumed = plan({
      deployments: [d],
      state: stateOf({ ...entryOf(first), paused: false }),
      nodes,
      now: at(31),
    });
    expect(nowIds(resumed)).toEqual([id(2), id(3)]);
  });

  it('admits nobody for OnDelete, yet creates the entry and answers every node', () => {
    const result = plan({
      deployments: [deployment({ type: 'OnDelete', maxUnavailable: '100%' })],
      nodes: oldFleet(3),
    });
    expect(result.admittedNow).toEqual([]);
    expect(entryOf(result)).toEqual(newRollout(V2));
    expect(result.changed).toBe(true);
    expect(result.admissions.get(id(2))).toEqual([
      { deployment: KEY, target: V2, attempt: 1, admitted: false, halted: false },
    ]);
  });

  it('starts over on a new target, keeping a pause', () => {
    const old: DeploymentRollout = {
      target: V2,
      attempt: 3,
      admitted: { [id(0)]: T0.toISOString() },
      paused: true,
      halted: { node: id(0), reason: 'x', time: T0.toISOString() },
    };
    const d3 = deployment({ maxUnavailable: 1 }, 'pods/web-v3');
    const nodes = [node(id(0), [[V2, true]]), ...oldFleet(2, 1)];
    const result = plan({ deployments: [d3], state: stateOf(old), nodes, now: at(60) });
    expect(entryOf(result)).toEqual(newRollout('pods/web-v3', true));
    expect(result.changed).toBe(true);
    expect(result.admissions.get(id(0))).toEqual([
      { deployment: KEY, target: 'pods/web-v3', attempt: 1, admitted: false, halted: false },
    ]);
    // Without the pause, the node that ran v2 is a candidate for v3 like any other.
    const unpaused = plan({
      deployments: [d3],
      state: stateOf({ ...old, paused: false }),
      nodes,
      now: at(60),
    });
    expect(nowIds(unpaused)).toEqual([id(0)]);
    expect(entryOf(unpaused).admitted).toEqual({ [id(0)]: at(60).toISOString() });
  });
});

describe('planRollouts: state entries and answers', () => {
  it('drops entries of deployments no longer planned and creates missing ones', () => {
    const state: RolloutState = {
      schema: 1,
      deployments: { 'default/gone': newRollout('pods/gone'), [KEY]: newRollout(V2) },
    };
    const nodes = [node(id(0), [[V2, true]])];
    const result = plan({ state, nodes });
    expect(Object.keys(result.state.deployments)).toEqual([KEY]);
    expect(result.changed).toBe(true);
    const created = plan({ nodes });
    expect(created.state).toEqual(stateOf(newRollout(V2)));
    expect(created.changed).toBe(true);
    expect(plan({ state: created.state, nodes }).changed).toBe(false);
  });

  it('answers each live node for each deployment of its NodeGroup, sorted by deployment', () => {
    // b has no Pod of api, which counts as one unavailable node of api's 2.
    const api = deployment({ maxUnavailable: 2 }, 'pods/api-v2', 'default/api');
    const db = deployment({ maxUnavailable: 1 }, 'pods/db-v2', 'data/db', 'data');
    const nodes: LiveNode[] = [
      {
        id: 'a',
        nodegroup: 'default',
        reports: [
          { deployment: KEY, pods: [{ pod: OLD, available: true }], failed: null },
          {
            deployment: 'default/api',
            pods: [{ pod: 'pods/api-v1', available: true }],
            failed: null,
          },
        ],
      },
      node('b', [[OLD, true]]),
      node('c', [['pods/db-v1', true]], { nodegroup: 'data', key: 'data/db' }),
      { id: 'd', nodegroup: 'empty', reports: [] },
    ];
    const result = plan({ deployments: [deployment(), db, api], nodes });
    expect([...result.admissions.keys()]).toEqual(['a', 'b', 'c', 'd']);
    expect(result.admissions.get('a')).toEqual([
      {
        deployment: 'default/api',
        target: 'pods/api-v2',
        attempt: 1,
        admitted: true,
        halted: false,
      },
      { deployment: KEY, target: V2, attempt: 1, admitted: true, halted: false },
    ]);
    // b runs no Pod of api: it starts api's target by itself.
    expect(result.admissions.get('b')).toEqual([
      {
        deployment: 'default/api',
        target: 'pods/api-v2',
        attempt: 1,
        admitted: false,
        halted: false,
      },
      { deployment: KEY, target: V2, attempt: 1, admitted: false, halted: false },
    ]);
    expect(result.admissions.get('c')).toEqual([
      { deployment: 'data/db', target: 'pods/db-v2', attempt: 1, admitted: true, halted: false },
    ]);
    expect(result.admissions.get('d')).toEqual([]);
    expect(result.admittedNow).toEqual([
      { deployment: 'data/db', node: 'c' },
      { deployment: 'default/api', node: 'a' },
      { deployment: KEY, node: 'a' },
    ]);
  });

  it('does not take inherited names for admitted nodes', () => {
    const nodes = [node('constructor', [[OLD, true]]), node('toString', [[OLD, true]])];
    const result = plan({ deployments: [deployment({ maxUnavailable: 1 })], nodes });
    expect(nowIds(result)).toEqual(['constructor']);
    expect(result.admissions.get('toString')?.[0]?.admitted).toBe(false);
    const text = serializeRolloutState(result.state);
    expect(serializeRolloutState(parseRolloutState(text))).toBe(text);
  });

  it('refuses a deployment or a node listed twice', () => {
    const twice = (input: Partial<PlanInput> & Pick<PlanInput, 'nodes'>): PodminError => {
      try {
        plan(input);
      } catch (err) {
        if (err instanceof PodminError) return err;
      }
      throw new Error('expected a PodminError');
    };
    expect(twice({ nodes: [...oldFleet(2), ...oldFleet(1)] }).code).toBe('INTERNAL');
    expect(twice({ deployments: [deployment(), deployment()], nodes: [] }).code).toBe('INTERNAL');
  });
});

describe('planRollouts: determinism', () => {
  /** A deep-frozen copy, so any mutation of the input throws. */
  const frozen = <T>(value: T): T => {
    const copy = structuredClone(value);
    const freeze = (v: unknown): void => {
      if (typeof v !== 'object' || v === null) return;
      Object.freeze(v);
      for (const child of Object.values(v)) freeze(child);
    };
    freeze(copy);
    return copy;
  };

  it('gives the same result whatever the order of its input, without changing it', () => {
    const d = deployment({ maxUnavailable: '20%' });
    const api = deployment({ maxSurge: '50%', maxUnavailable: 0 }, 'pods/api-v2', 'default/api');
    const first = plan({ deployments: [d, api], nodes: oldFleet(20) });
    const nodes = oldFleet(20).map((n, i) =>
      i % 3 === 0 ? node(n.id, [[V2, i % 2 === 0]]) : i % 5 === 0 ? node(n.id, [[OLD, false]]) : n,
    );
    const input: PlanInput = frozen({
      deployments: [d, api],
      state: first.state,
      nodes,
      now: at(9),
    });
    const a = planRollouts(input);
    const shuffled = planRollouts({
      ...input,
      deployments: [...input.deployments].reverse(),
      nodes: [...input.nodes].reverse(),
    });
    expect(serializeRolloutState(shuffled.state)).toBe(serializeRolloutState(a.state));
    expect([...shuffled.admissions]).toEqual([...a.admissions]);
    expect(shuffled.admittedNow).toEqual(a.admittedNow);
    expect(planRollouts(input)).toEqual(a);
    expect(a.admittedNow.length).toBeGreaterThan(0);
  });
});

/** A small deterministic PRNG (mulberry32), so simulated delays are the same every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface SimPod {
  pod: string;
  availableAt: number;
}

/**
 * Passes of one-second steps: the leader plans on reports one step old, nodes act on their
 * admission after a random delay, and a new Pod becomes available after another.
 */
function simulate(strategyOver: Partial<RolloutStrategy>, total: number, seed: number) {
  const random = prng(seed);
  const d = deployment(strategyOver);
  const limits = resolveLimits(d.strategy, total);
  const surge = limits.maxSurge > 0;
  const fleet = Array.from({ length: total }, (_, i) => ({
    id: id(i),
    pods: [{ pod: OLD, availableAt: -1 }] as SimPod[],
    /** When it moves to its admission; null before it learns of one. */
    actAt: null as number | null,
    acted: false,
  }));
  const reportsAt = (t: number): LiveNode[] =>
    fleet.map((n) =>
      node(
        n.id,
        n.pods.map((p) => [p.pod, p.availableAt <= t] as const),
      ),
    );
  let state = EMPTY_ROLLOUT_STATE;
  let maxWithoutAvailable = 0;
  let maxRunningTwo = 0;
  let admittingPasses = 0;
  let reports = reportsAt(0);
  for (let t = 0; t < 10_000; t++) {
    const result = planRollouts({ deployments: [d], state, nodes: reports, now: at(t) });
    state = result.state;
    if (result.admittedNow.length > 0) admittingPasses++;
    for (const n of fleet) {
      const admitted = result.admissions.get(n.id)?.[0]?.admitted === true;
      if (admitted && n.actAt === null) n.actAt = t + Math.floor(random() * 4);
      if (!n.acted && n.actAt !== null && n.actAt <= t) {
        n.acted = true;
        const pod = { pod: V2, availableAt: t + 1 + Math.floor(random() * 6) };
        n.pods = surge ? [...n.pods, pod] : [pod];
      }
      // With surge, the old Pod goes once the new one is available.
      if (surge && n.pods.length === 2 && (n.pods[1] as SimPod).availableAt <= t)
        n.pods = n.pods.slice(1);
    }
    const withoutAvailable = fleet.filter((n) => !n.pods.some((p) => p.availableAt <= t)).length;
    const runningTwo = fleet.filter((n) => n.pods.length === 2).length;
    maxWithoutAvailable = Math.max(maxWithoutAvailable, withoutAvailable);
    maxRunningTwo = Math.max(maxRunningTwo, runningTwo);
    if (
      fleet.every((n) => n.pods.length === 1 && n.pods[0]?.pod === V2 && n.pods[0].availableAt <= t)
    )
      return { t, limits, maxWithoutAvailable, maxRunningTwo, admittingPasses };
    reports = reportsAt(t);
  }
  throw new Error('the simulated rollout did not finish');
}

describe('planRollouts: simulated rollouts keep the limits', () => {
  it.each([
    [{ maxUnavailable: '10%' }, 200],
    [{ maxUnavailable: '25%' }, 37],
    [{ maxUnavailable: 3 }, 50],
    [{ maxUnavailable: 1 }, 7],
  ] as const)('without surge (%p, %p nodes)', (over, total) => {
    for (const seed of [1, 2, 3]) {
      const run = simulate(over, total, seed);
      expect(run.maxWithoutAvailable).toBeLessThanOrEqual(run.limits.maxUnavailable);
      expect(run.maxWithoutAvailable).toBeGreaterThan(0);
      expect(run.maxRunningTwo).toBe(0);
      expect(run.admittingPasses).toBeGreaterThanOrEqual(
        Math.ceil(total / run.limits.maxUnavailable),
      );
    }
  });

  it.each([
    [{ maxUnavailable: 0, maxSurge: '10%' }, 200],
    [{ maxUnavailable: 0, maxSurge: '25%' }, 37],
    [{ maxUnavailable: 0, maxSurge: 1 }, 7],
  ] as const)('with surge (%p, %p nodes)', (over, total) => {
    for (const seed of [1, 2, 3]) {
      const run = simulate(over, total, seed);
      expect(run.maxRunningTwo).toBeLessThanOrEqual(run.limits.maxSurge);
      expect(run.maxRunningTwo).toBeGreaterThan(0);
      expect(run.maxWithoutAvailable).toBe(0);
    }
  });

  it('finishes 1,000 nodes at 10% in a little over ten waves of the slowest node', () => {
    const run = simulate({ maxUnavailable: '10%' }, 1000, 7);
    expect(run.limits.maxUnavailable).toBe(100);
    expect(run.maxWithoutAvailable).toBeLessThanOrEqual(100);
    // Each node takes at most 1 (stale report) + 3 (act) + 6 (start) steps.
    expect(run.t).toBeLessThanOrEqual(10 * 11 + 11);
  });
});
