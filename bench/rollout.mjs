#!/usr/bin/env node
// Rollouts (DESIGN.md §6.12, §8). Fleet part: 1,000 simulated nodes of one NodeGroup rolled out
// with `maxUnavailable: 10%` in ≤ 12 waves × (poll + Pod start + minReadySeconds) + 10 s, with
// bucket requests per rollout O(waves); a surge variant (`maxSurge: 10%, maxUnavailable: 0`)
// beside it. The leader's planner is the real @podmin/util-rollout (bundled here with esbuild);
// nodes, the clock and the bucket are simulated in virtual time, so a run takes a few seconds
// and gives the same numbers on every machine for the same seed. The invariants (never more
// nodes without an available Pod than maxUnavailable, never more nodes running two Pods than
// maxSurge) are checked after every simulated event.
//   node bench/rollout.mjs [--quick] [--seed=N] [--node]
// --quick: 200 nodes (a smoke run for the integration test). --node: the per-node part (see
// bench/lib/rollout-node.mjs). Exit 1: a budget missed or an invariant broken; 2: the run failed.
import fs from 'node:fs';
import path from 'node:path';
import { bundleLibraries } from './lib/bundle-libraries.mjs';
import { result, tempDir, yieldToSignals } from './lib/bench.mjs';
import { mulberry32 } from './lib/prng.mjs';
import { nodeBench } from './lib/rollout-node.mjs';
import { Bucket, EventQueue } from './lib/virtual-fleet.mjs';

const args = process.argv.slice(2);
const usage = 'usage: node bench/rollout.mjs [--quick] [--seed=N] [--node]';
const quick = args.includes('--quick');
const nodePart = args.includes('--node');
const seedArg = args.find((a) => a.startsWith('--seed='));
const seed = seedArg === undefined ? 1 : Number(seedArg.slice('--seed='.length));
if (
  !Number.isSafeInteger(seed) ||
  args.some((a) => a !== '--quick' && a !== '--node' && !a.startsWith('--seed='))
) {
  console.error(usage);
  process.exit(2);
}

// The timings DESIGN §6.12 and the agent use: Hello every 2 s, agent-staticpod's poll every 5 s
// ±10%, a Pod Ready 3 s after its manifest lands (synthetic readiness), the leader planning 200 ms
// after a report changed and at least every 5 s.
const HELLO_MS = 2000;
const POLL_MS = 5000;
const POLL_JITTER = 0.1;
const START_MS = 3000;
const MIN_READY_SECONDS = 5;
const COALESCE_MS = 200;
const PLAN_EVERY_MS = 5000;
const PROGRESS_DEADLINE_SECONDS = 300;
const NODES = quick ? 200 : 1000;
/** How long the simulation goes on after the last node finished (idle passes must not write). */
const SETTLE_MS = 30_000;
/** Virtual time after which a rollout that has not finished counts as stuck. */
const GIVE_UP_MS = 3600_000;
const EPOCH = Date.parse('2025-01-01T00:00:00.000Z');

const KEY = 'default/web';
const OLD = 'pods/web-1111111111111111';
const TARGET = 'pods/web-2222222222222222';

const VARIANTS = [
  { name: 'maxUnavailable 10%', maxUnavailable: '10%', maxSurge: 0 },
  { name: 'maxSurge 10%, maxUnavailable 0', maxUnavailable: 0, maxSurge: '10%' },
];

/** One rollout of `variant` over `total` simulated nodes. */
function simulate(lib, variant, total) {
  const random = mulberry32(seed);
  const strategy = {
    type: 'RollingUpdate',
    maxUnavailable: variant.maxUnavailable,
    maxSurge: variant.maxSurge,
    minReadySeconds: MIN_READY_SECONDS,
    progressDeadlineSeconds: PROGRESS_DEADLINE_SECONDS,
  };
  const limits = lib.resolveLimits(strategy, total);
  const surge = limits.maxSurge > 0;
  const deployment = { key: KEY, nodegroup: 'default', target: TARGET, strategy };
  const queue = new EventQueue();

  // Before the deploy: every node runs the old revision, available, and the leader (in its term
  // already) has their reports and the state of the rollout that brought the old revision.
  const nodes = Array.from({ length: total }, (_, n) => ({
    id: `i-0${n.toString(16).padStart(16, '0')}`,
    pods: [{ pod: OLD, available: true }],
    admission: undefined,
    finished: false,
    withoutAvailable: false,
    runningTwo: false,
  }));
  const bucket = new Bucket(
    lib.serializeRolloutState({ schema: 1, deployments: { [KEY]: lib.newRollout(OLD) } }),
  );
  const read = bucket.get();
  const leader = {
    state: lib.parseRolloutState(read.body),
    etag: read.etag,
    reports: new Map(),
    admissions: new Map(),
    passPending: false,
    periodic: 0,
    passes: 0,
    batches: [],
  };

  const report = (node) => ({
    deployment: KEY,
    pods: node.pods.map((p) => ({ pod: p.pod, available: p.available })),
    failed: null,
  });
  for (const node of nodes) leader.reports.set(node.id, report(node));

  // Invariants on what the nodes really run, kept as counters updated on every change.
  let withoutAvailable = 0;
  let runningTwo = 0;
  let finished = 0;
  let maxWithoutAvailable = 0;
  let maxRunningTwo = 0;
  let finishedAt;
  const violations = [];
  const recount = (node, t) => {
    const without = !node.pods.some((p) => p.available);
    const two = node.pods.length === 2;
    const done = node.pods.length === 1 && node.pods[0].pod === TARGET && node.pods[0].available;
    withoutAvailable += Number(without) - Number(node.withoutAvailable);
    runningTwo += Number(two) - Number(node.runningTwo);
    finished += Number(done) - Number(node.finished);
    Object.assign(node, { withoutAvailable: without, runningTwo: two, finished: done });
    maxWithoutAvailable = Math.max(maxWithoutAvailable, withoutAvailable);
    maxRunningTwo = Math.max(maxRunningTwo, runningTwo);
    if (withoutAvailable > limits.maxUnavailable || runningTwo > limits.maxSurge)
      violations.push(
        `${(t / 1000).toFixed(1)} s: ${withoutAvailable} without an available Pod, ${runningTwo} running two`,
      );
    if (finished === total && finishedAt === undefined) finishedAt = t;
  };

  const pass = (t) => {
    leader.passPending = false;
    leader.passes++;
    const result = lib.planRollouts({
      deployments: [deployment],
      state: leader.state,
      nodes: nodes.map((n) => ({
        id: n.id,
        nodegroup: 'default',
        reports: [leader.reports.get(n.id)],
      })),
      now: new Date(EPOCH + t),
    });
    if (result.changed) {
      // What a successor would read must parse strictly.
      const body = lib.serializeRolloutState(result.state);
      lib.parseRolloutState(body);
      leader.etag = bucket.putIfMatch(body, leader.etag);
    }
    if (result.halted.length > 0)
      throw new Error(`the rollout halted: ${JSON.stringify(result.halted)}`);
    leader.state = result.state;
    leader.admissions = result.admissions;
    if (result.admittedNow.length > 0) leader.batches.push({ t, nodes: result.admittedNow.length });
    const periodic = ++leader.periodic;
    queue.push(t + PLAN_EVERY_MS, (at) => {
      if (periodic === leader.periodic) pass(at);
    });
  };

  const hello = (node, t) => {
    const now = report(node);
    if (JSON.stringify(now) !== JSON.stringify(leader.reports.get(node.id))) {
      leader.reports.set(node.id, now);
      if (!leader.passPending) {
        leader.passPending = true;
        queue.push(t + COALESCE_MS, pass);
      }
    }
    // The answer carries the leader's latest admissions; agent-staticpod reads them at its poll.
    node.admission = leader.admissions.get(node.id)?.find((a) => a.deployment === KEY);
    queue.push(t + HELLO_MS, (at) => hello(node, at));
  };

  const poll = (node, t) => {
    const admission = node.admission;
    if (
      admission?.admitted === true &&
      admission.target === TARGET &&
      !node.pods.some((p) => p.pod === TARGET)
    ) {
      const pod = { pod: TARGET, available: false };
      // Without surge the old Pod stops for the new one; with surge both run.
      node.pods = surge ? [...node.pods, pod] : [pod];
      recount(node, t);
      queue.push(t + START_MS + MIN_READY_SECONDS * 1000, (at) => {
        pod.available = true;
        // With surge the old Pod leaves once the new one is available.
        node.pods = node.pods.filter((p) => p === pod);
        recount(node, at);
      });
    }
    const interval = POLL_MS * (1 - POLL_JITTER + 2 * POLL_JITTER * random());
    queue.push(t + Math.round(interval), (at) => poll(node, at));
  };

  for (const node of nodes) {
    recount(node, 0);
    queue.push(Math.floor(random() * HELLO_MS), (at) => hello(node, at));
    queue.push(Math.floor(random() * POLL_MS), (at) => poll(node, at));
  }
  // The deploy commits the new revision at 0; the leader plans at once on the new index.
  queue.push(0, pass);

  let t = 0;
  while (queue.size > 0) {
    const event = queue.pop();
    t = event.t;
    if (finishedAt !== undefined ? t > finishedAt + SETTLE_MS : t > GIVE_UP_MS) break;
    event.fn(t);
  }
  return {
    total,
    limits,
    finishedAt,
    batches: leader.batches,
    passes: leader.passes,
    gets: bucket.gets,
    puts: bucket.puts,
    maxWithoutAvailable,
    maxRunningTwo,
    violations,
  };
}

const dir = tempDir('podmin-bench-rollout-');
let lib;
try {
  lib = await bundleLibraries(path.join(dir, 'rollout-lib.cjs'), [
    "export { newRollout, parseRolloutState, planRollouts, resolveLimits, serializeRolloutState } from '@podmin/util-rollout';",
  ]);
} finally {
  // Loaded: nothing of the run stays on disk, whatever happens next.
  fs.rmSync(dir, { recursive: true, force: true });
}

let exitCode = 0;
try {
  const waveMs = POLL_MS + START_MS + MIN_READY_SECONDS * 1000;
  const boundMs = 12 * waveMs + 10_000;
  console.log(
    `rollout fleet: ${NODES} nodes in one NodeGroup, minReadySeconds ${MIN_READY_SECONDS}; Hello every ${HELLO_MS / 1000} s, poll every ${POLL_MS / 1000} s ±${POLL_JITTER * 100}%, Pod start ${START_MS / 1000} s; leader plans ${COALESCE_MS} ms after a report changed and every ${PLAN_EVERY_MS / 1000} s; virtual time, seed ${seed}`,
  );
  const rows = [];
  for (const variant of VARIANTS) {
    await yieldToSignals();
    const run = simulate(lib, variant, NODES);
    const waves = run.batches.length;
    const requests = run.gets + run.puts;
    // O(waves): at most three writes per wave the limit allows (ceil(nodes / limit)), plus a few.
    const atLimitWaves = Math.ceil(
      NODES / Math.max(run.limits.maxUnavailable, run.limits.maxSurge),
    );
    const requestBudget = 3 * atLimitWaves + 5;
    const timeOk = run.finishedAt !== undefined && run.finishedAt <= boundMs;
    const requestsOk = requests <= requestBudget;
    const invariantsOk = run.violations.length === 0;
    const atLimit = Math.ceil(NODES / Math.max(run.limits.maxUnavailable, run.limits.maxSurge));
    const seconds = (ms) => (ms / 1000).toFixed(1);
    console.log(
      `${variant.name} (maxUnavailable ${run.limits.maxUnavailable}, maxSurge ${run.limits.maxSurge} of ${NODES})`,
    );
    console.log(
      `  waves (admission batches): ${waves} (${atLimit} at the limit); largest ${Math.max(...run.batches.map((b) => b.nodes))} nodes; leader passes ${run.passes}`,
    );
    console.log(
      run.finishedAt === undefined
        ? `  completion: not finished within ${GIVE_UP_MS / 1000} s OVER BUDGET`
        : `  completion: ${seconds(run.finishedAt)} s; bound 12 × (${POLL_MS / 1000} + ${START_MS / 1000} + ${MIN_READY_SECONDS}) s + 10 s = ${seconds(boundMs)} s; ratio ${(run.finishedAt / boundMs).toFixed(2)} ${timeOk ? 'OK' : 'OVER BUDGET'}`,
    );
    console.log(
      `  bucket requests: ${requests} (${run.gets} GET, ${run.puts} conditional PUT); ${(requests / Math.max(waves, 1)).toFixed(2)} per wave; budget <= 3 × ${atLimitWaves} waves at the limit + 5 = ${requestBudget} ${requestsOk ? 'OK' : 'OVER BUDGET'}; ${(requests / atLimit).toFixed(1)} per wave at the limit (unbudgeted)`,
    );
    console.log(
      `  invariants: nodes without an available Pod max ${run.maxWithoutAvailable} <= ${run.limits.maxUnavailable}, nodes running two Pods max ${run.maxRunningTwo} <= ${run.limits.maxSurge} ${invariantsOk ? 'OK' : `BROKEN (${run.violations.length === 1 ? 'once' : `${run.violations.length} times`}, first at ${run.violations[0]})`}`,
    );
    if (!timeOk || !requestsOk || !invariantsOk) exitCode = 1;
    result({
      figure: `${variant.name}: completion of ${NODES} nodes ${run.finishedAt === undefined ? 'never' : `${seconds(run.finishedAt)} s`}`,
      anchor: `12 waves bound ${seconds(boundMs)} s`,
      // Not finished: twice the bound, which is what the simulation gave up at or beyond.
      ratio:
        run.finishedAt === undefined ? Math.max(2, GIVE_UP_MS / boundMs) : run.finishedAt / boundMs,
      max: 1,
    });
    result({
      figure: `${variant.name}: bucket requests ${requests}`,
      anchor: `3 × ${atLimitWaves} waves + 5 = ${requestBudget}`,
      ratio: requests / requestBudget,
      max: 1,
    });
    result({
      figure: `${variant.name}: invariant violations ${run.violations.length}`,
      anchor: '0 violations',
      ratio: run.violations.length,
      max: 0,
    });
    rows.push([
      variant.name,
      String(NODES),
      String(waves),
      run.finishedAt === undefined ? '-' : seconds(run.finishedAt),
      seconds(boundMs),
      run.finishedAt === undefined ? '-' : (run.finishedAt / boundMs).toFixed(2),
      String(requests),
      (requests / Math.max(waves, 1)).toFixed(2),
      timeOk && requestsOk && invariantsOk ? 'OK' : 'OVER BUDGET',
    ]);
  }
  await yieldToSignals();
  const header = [
    'variant',
    'nodes',
    'waves',
    'time s',
    'bound s',
    'ratio',
    'requests',
    'req/wave',
    'result',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));

  if (nodePart) {
    if (!(await nodeBench())) exitCode = 1;
  } else console.log('node part: run with --node after `npm run demo` (see bench/README.md)');
} catch (err) {
  console.error(`bench/rollout.mjs failed: ${err instanceof Error ? err.stack : String(err)}`);
  exitCode = 2;
}
process.exitCode = exitCode;
