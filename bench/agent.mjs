#!/usr/bin/env node
// Budgets (DESIGN.md §8):
//   reconcile: committed index → manifest on disk within one poll interval + 0.5 s (p95 ≤ 5.5 s)
//   memory:    every agent process together ≤ 400 MiB RSS at idle once all six services run;
//              ≤ 300 MiB while only staticpod, identity and registry exist (issue budget)
// Runs the real CLI and agent (local provider) in a temporary HOME. Build first: npm run build.
//   node bench/agent.mjs [deploys]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'dist/bin/podmin.cjs');
const deploys = Number(process.argv[2] ?? 20);
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-bench-agent-'));
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const [health, registry] = [await freePort(), await freePort()];
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, 'c'),
  XDG_DATA_HOME: path.join(home, 'd'),
  XDG_CACHE_HOME: path.join(home, 'k'),
  PODMIN_LOCAL_HEALTH_ADDRESS: `127.0.0.1:${health}`,
  PODMIN_LOCAL_REGISTRY_LISTEN: `127.0.0.1:${registry}`,
};
const podmin = (...args) => {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: home, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`podmin ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};
const rssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  podmin('connect', 'bench', '--provider', 'local');
  const nodeRoot = podmin('setup');
  const manifest = path.join(nodeRoot, 'etc/podmin/manifests/web.yaml');
  const latencies = [];
  for (let i = 0; i < deploys; i++) {
    const before = fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8') : '';
    podmin('deploy', 'web', '-g', 'default', '--image', `hello:v${i}`);
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

  await sleep(5000); // idle: one poll interval with nothing to do
  const status = await (await fetch(`http://127.0.0.1:${health}/readyz`)).json();
  const agentPid = JSON.parse(
    fs.readFileSync(path.join(nodeRoot, 'run/podmin/agent.json'), 'utf8'),
  ).pid;
  const rows = [['podmin-agent', agentPid], ...status.services.map((s) => [s.name, s.pid])];
  let total = 0;
  for (const [name, pid] of rows) {
    const mib = rssMiB(pid);
    total += mib;
    console.log(`idle RSS ${name.padEnd(12)} ${mib.toFixed(1)} MiB`);
  }
  // The supervisor plus three services have 300 MiB; the full set of six services has 400.
  const budget = rows.length <= 4 ? 300 : 400;
  console.log(
    `idle RSS total of ${rows.length} processes: ${total.toFixed(1)} MiB; ratio to budget (${budget} MiB) = ${(total / budget).toFixed(2)} ${total <= budget ? 'OK' : 'OVER BUDGET'}`,
  );
} finally {
  spawnSync(process.execPath, [bin, 'teardown'], { cwd: home, env });
  fs.rmSync(home, { recursive: true, force: true });
}
