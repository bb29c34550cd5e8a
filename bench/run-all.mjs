#!/usr/bin/env node
// Runs every bench of DESIGN.md §8 one after another and prints one table: figure, anchor,
// ratio, budget, OK/OVER. Exits 2 when a bench failed to run, else 1 when any line is OVER, 0
// otherwise; a bench that cannot run here prints SKIPPED and does not fail the run.
//   node bench/run-all.mjs [--quick] [--only=a,b]
// --quick: each bench's smoke mode (what CI runs, tools/test-all.sh). Each bench's own output
// goes to stderr as it runs; the table is the only thing on stdout. The figures come from the
// benches' `BENCH-RESULT` lines (bench/lib/bench.mjs); a bench that prints none is reported by
// its exit code (0 OK, 1 OVER, other FAILED). Build first (`npm run build`).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseResults } from './lib/bench.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
if (args.some((a) => a !== '--quick' && !a.startsWith('--only='))) {
  console.error('usage: node bench/run-all.mjs [--quick] [--only=bench,...]');
  process.exit(2);
}

/** Every bench with a budget, and its arguments for a full and a quick run. */
const BENCHES = [
  { name: 'cli-start', full: [], quick: ['--quick'] },
  { name: 'deploy-requests', full: [], quick: [] },
  { name: 'deploy-preflight', full: [], quick: ['1'] },
  { name: 'list', full: [], quick: ['--quick'] },
  { name: 'agent', full: [], quick: ['--quick'] },
  { name: 'registry-pull', full: [], quick: ['--quick'] },
  { name: 'election', full: [], quick: ['2', '0.25'] },
  { name: 'rollout', full: [], quick: ['--quick'] },
  { name: 'dns', full: [], quick: ['--quick'] },
  { name: 'dataplane', full: [], quick: ['--quick'] },
  { name: 'trust-verify', full: [], quick: ['--quick'] },
];
if (only) {
  const unknown = only.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(
      `--only: unknown bench ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`,
    );
    process.exit(2);
  }
}

let current;
let stopping = false;
for (const [signal, number] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
]) {
  process.on(signal, () => {
    stopping = true;
    // The bench cleans up after itself on the signal; wait for it, then go.
    if (current) current.once('exit', () => process.exit(128 + number)).kill(signal);
    else process.exit(128 + number);
  });
}

/** Runs one bench, its output to stderr; resolves to { code, stdout }. */
function run(bench) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(import.meta.dirname, `${bench.name}.mjs`), ...(quick ? bench.quick : bench.full)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    current = child;
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      process.stderr.write(d);
    });
    child.on('close', (code, signal) => {
      current = undefined;
      resolve({ code: code ?? 128, signal, stdout });
    });
  });
}

const rows = [];
const started = Date.now();
process.stderr.write(
  `run-all${quick ? ' --quick' : ''}: load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${os.cpus().length} CPUs\n`,
);
for (const bench of BENCHES.filter((b) => !only || only.includes(b.name))) {
  if (stopping) break;
  process.stderr.write(
    `\n==> bench/${bench.name}.mjs ${(quick ? bench.quick : bench.full).join(' ')}\n`,
  );
  const t0 = Date.now();
  const { code, stdout } = await run(bench);
  const seconds = Math.round((Date.now() - t0) / 1000);
  const results = parseResults(stdout);
  const skips = results.filter((r) => r.skipped !== undefined);
  const lines = results.filter((r) => r.skipped === undefined);
  for (const r of lines) {
    rows.push([bench.name, r.figure, r.anchor, String(r.ratio), r.budget, r.status]);
  }
  for (const r of skips) rows.push([bench.name, `SKIPPED: ${r.skipped}`, '', '', '', 'SKIPPED']);
  if (code === 2 || code > 2 || (code === 1 && lines.every((r) => r.status === 'OK'))) {
    // A failed run, or an over-budget exit without an OVER line (a bench without result lines).
    const what = code === 1 ? 'OVER' : 'FAILED';
    rows.push([bench.name, `exit code ${code} (${seconds} s)`, '', '', '', what]);
  } else if (results.length === 0 && /^SKIPPED /m.test(stdout)) {
    // A bench without result lines that says it could not run.
    const reason = /^SKIPPED [^:]*: ?(.*)$/m.exec(stdout)?.[1] ?? '';
    rows.push([bench.name, `SKIPPED: ${reason}`, '', '', '', 'SKIPPED']);
  } else if (results.length === 0) {
    const note = quick ? 'no budget checked in the quick run' : 'no result lines';
    rows.push([bench.name, `exit code ${code}, ${note} (${seconds} s)`, '', '', '', 'OK']);
  }
}

const header = ['bench', 'figure', 'anchor', 'ratio', 'budget', 'result'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const format = (r) =>
  r
    .map((c, i) => c.padEnd(widths[i]))
    .join('  ')
    .trimEnd();
console.log(format(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(format(r));
const bad = rows.filter((r) => r[5] === 'OVER' || r[5] === 'FAILED');
console.log(
  `\n${rows.length} lines: ${rows.filter((r) => r[5] === 'OK').length} OK, ${bad.filter((r) => r[5] === 'OVER').length} OVER, ${bad.filter((r) => r[5] === 'FAILED').length} FAILED, ${rows.filter((r) => r[5] === 'SKIPPED').length} SKIPPED; ${Math.round((Date.now() - started) / 1000)} s`,
);
// 2 when a bench failed to run, 1 when every bench ran and a budget is over, 0 otherwise.
process.exit(bad.some((r) => r[5] === 'FAILED') ? 2 : bad.length > 0 ? 1 : 0);
