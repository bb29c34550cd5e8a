#!/usr/bin/env node
// Budgets (DESIGN.md §8):
//   reconcile: committed index → manifest on disk within one poll interval + 0.5 s (p95 ≤ 5.5 s)
//   memory:    every agent process together ≤ 400 MiB RSS at idle once all six services run
//              (seven processes with the supervisor); ≤ 300 MiB while only staticpod, identity
//              and registry exist (issue budget). Prints RSS (anonymous and file-backed) and PSS
//              per process: RSS counts the node binary's shared pages in every process, PSS
//              divides them, but the budget is RSS.
// Runs the real CLI and agent (local provider) in a temporary HOME, every agent listener on a
// free loopback port of its own (never the node's defaults, so a running node is untouched).
// Each deploy commits at an offset after the poll that applied the one before it, the offsets
// spread evenly over the poll interval in a shuffled order, so the latencies sample every phase
// of the poll (committing right after a poll, every deploy waited a whole interval). Build
// first: npm run build.
//   node bench/agent.mjs [--quick] [deploys]    (--quick: 4 deploys, 20 s idle)
// Exits 1 when a budget line says OVER BUDGET or the reconcile part fails (the memory lines are
// still measured and printed), 2 when the run fails; SIGINT/SIGTERM tear the agent down.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { main, markOver, onCleanup, result, tempDir } from './lib/bench.mjs';
import { PODMIN_BIN as bin, deployWebArgs, homeEnv } from './lib/cli.mjs';
import { freeLoopbackPort } from './lib/free-port.mjs';

const quick = process.argv.includes('--quick');
const deploys = Number(process.argv.slice(2).find((a) => a !== '--quick') ?? (quick ? 4 : 20));
if (!Number.isInteger(deploys) || deploys < 1) {
  console.error('usage: node bench/agent.mjs [--quick] [deploys >= 1]');
  process.exit(2);
}
// agent-staticpod's poll interval (DEFAULT_TIMING.intervalMs in @podmin/agent-feature-staticpod).
const POLL_MS = 5_000;
// Idle: every process gives back its start-up pages 15 s after it serves.
const IDLE_MS = quick ? 20_000 : 30_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await main(async () => {
  // Short: the agent's Unix sockets live under it, and a socket path has at most 107 bytes.
  const home = tempDir('pm-agent-');
  const [health, registry, dns, coordination] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  const env = {
    ...process.env,
    ...homeEnv(home),
    PODMIN_LOCAL_HEALTH_ADDRESS: `127.0.0.1:${health}`,
    PODMIN_LOCAL_REGISTRY_LISTEN: `127.0.0.1:${registry}`,
    PODMIN_LOCAL_DNS_LISTEN: `127.0.0.1:${dns}`,
    PODMIN_LOCAL_COORDINATION_PORT: String(coordination),
  };
  const podmin = (...args) => {
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: home, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`podmin ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  /** RSS, its anonymous and file-backed parts, and PSS of one process, in MiB. */
  const memoryOf = (pid) => {
    const kB = {};
    for (const line of fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n')) {
      const m = /^(\w+):\s+(\d+) kB/.exec(line);
      if (m) kB[m[1]] = Number(m[2]);
    }
    const mib = (k) => (kB[k] ?? NaN) / 1024;
    return {
      rss: mib('Rss'),
      anon: mib('Anonymous'),
      file: mib('Rss') - mib('Anonymous'),
      pss: mib('Pss'),
    };
  };

  {
    podmin('connect', 'bench', '--provider', 'local');
    // Registered before setup starts the agent: a signal while it starts still tears it down.
    onCleanup(() => spawnSync(process.execPath, [bin, 'teardown'], { cwd: home, env }));
    const nodeRoot = podmin('setup');
    try {
      await reconcile(nodeRoot, podmin);
    } catch (err) {
      markOver();
      console.log(`reconcile FAILED: ${err.message}`);
    }

    // Idle: every process gives back its start-up pages 15 s after it serves
    // (libs/agent/data-access-memory), then several poll intervals with nothing to do fault back
    // in what idle work touches, so the numbers are the steady idle state, not the low point.
    await sleep(IDLE_MS);
    const status = await (await fetch(`http://127.0.0.1:${health}/readyz`)).json();
    const agentPid = JSON.parse(
      fs.readFileSync(path.join(nodeRoot, 'run/podmin/agent.json'), 'utf8'),
    ).pid;
    const rows = [['podmin-agent', agentPid], ...status.services.map((s) => [s.name, s.pid])];
    let total = 0;
    let totalPss = 0;
    const children = [];
    for (const [name, pid] of rows) {
      const m = memoryOf(pid);
      total += m.rss;
      totalPss += m.pss;
      if (name !== 'podmin-agent') children.push(m.rss);
      console.log(
        `idle RSS ${name.padEnd(12)} ${m.rss.toFixed(1).padStart(5)} MiB (anonymous ${m.anon.toFixed(1)}, file-backed ${m.file.toFixed(1)}), PSS ${m.pss.toFixed(1)} MiB`,
      );
    }
    // The supervisor plus three services have 300 MiB; the full set of six services has 400.
    const budget = rows.length <= 4 ? 300 : 400;
    console.log(
      `idle PSS total of ${rows.length} processes: ${totalPss.toFixed(1)} MiB (unbudgeted)`,
    );
    console.log(
      `idle RSS total of ${rows.length} processes: ${total.toFixed(1)} MiB; ratio to budget (${budget} MiB) = ${(total / budget).toFixed(2)} ${total <= budget ? 'OK' : 'OVER BUDGET'}`,
    );
    result({
      figure: `idle RSS of ${rows.length} processes: ${total.toFixed(0)} MiB`,
      anchor: `${budget} MiB`,
      ratio: total / budget,
      max: 1,
    });
    if (rows.length < 7 && children.length > 0) {
      // Unbudgeted: the services still to come, each counted at the mean of today's services.
      const mean = children.reduce((a, b) => a + b, 0) / children.length;
      const projected = total + (7 - rows.length) * mean;
      console.log(
        `projected idle RSS of 7 processes (${7 - rows.length} more at the services' mean ${mean.toFixed(1)} MiB): ${projected.toFixed(1)} MiB; ratio to 400 MiB = ${(projected / 400).toFixed(2)}`,
      );
    }
  }
});

/** Deploys `deploys` times and prints the committed → on-disk latency against its budget. */
async function reconcile(nodeRoot, podmin) {
  const manifest = path.join(nodeRoot, 'etc/podmin/manifests/web.yaml');
  const latencies = [];
  // Offset i of n after the poll that applied the previous deploy: (k + 0.5) / n of the interval,
  // k in a fixed shuffled order (a linear congruential generator with a fixed seed).
  const offsets = Array.from({ length: deploys }, (_, k) => ((k + 0.5) / deploys) * POLL_MS);
  let seed = 35;
  for (let k = offsets.length - 1; k > 0; k--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (k + 1);
    [offsets[k], offsets[j]] = [offsets[j], offsets[k]];
  }
  for (let i = 0; i < deploys; i++) {
    const before = fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8') : '';
    // The first deploy has no poll before it to count from.
    if (i > 0) await sleep(offsets[i]);
    podmin(...deployWebArgs(`hello:v${i}`));
    const committed = Date.now();
    for (;;) {
      const now = fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8') : '';
      if (now !== before && now.includes(`hello:v${i}`)) break;
      if (Date.now() - committed > 30_000) throw new Error('manifest did not change within 30 s');
      await sleep(10);
    }
    latencies.push((Date.now() - committed) / 1000);
  }
  latencies.sort((a, b) => a - b);
  const p = (q) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
  console.log(
    `reconcile latency over ${deploys} deploys: p50 ${p(0.5).toFixed(2)} s, p95 ${p(0.95).toFixed(2)} s, max ${latencies.at(-1).toFixed(2)} s`,
  );
  console.log(
    `reconcile ratio: p95 / budget (5.5 s) = ${(p(0.95) / 5.5).toFixed(2)} ${p(0.95) <= 5.5 ? 'OK' : 'OVER BUDGET'}`,
  );
  result({
    figure: `reconcile p95 ${p(0.95).toFixed(2)} s (p50 ${p(0.5).toFixed(2)} s)`,
    anchor: 'poll + 0.5 s = 5.5 s',
    ratio: p(0.95) / 5.5,
    max: 1,
  });
}
