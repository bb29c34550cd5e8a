// What every bench shares: the machine-readable result line `bench/run-all.mjs` collects, and
// the cleanup of what a bench started (processes, temporary directories, network namespaces,
// anything else) on normal exit, failure, SIGINT, SIGTERM and SIGHUP.
//
// Result line: one line on stdout, the prefix `BENCH-RESULT ` then one JSON object:
//   BENCH-RESULT {"bench":"cli-start","figure":"podmin validate -f, warm","anchor":"node -e 0",
//                 "ratio":1.12,"budget":"<= 1.2","status":"OK"}
//   bench   the script's name without .mjs
//   figure  what was measured (with its value and unit when useful: "p95 4.9 s")
//   anchor  what the ratio divides by ("node -e 0", "5.5 s", "4 requests")
//   ratio   figure / anchor, a number
//   budget  "<= X" or ">= X": the limit the ratio must stay within
//   status  "OK" or "OVER"
// A bench that cannot run prints `BENCH-RESULT {"bench":"dns","skipped":"<reason>"}`. A bench
// exits 1 when any of its lines is OVER, 2 when it failed, 0 otherwise; killed by a signal, it
// cleans up and exits 128 + the signal's number.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The prefix of a result line. */
export const RESULT_PREFIX = 'BENCH-RESULT ';

/**
 * Checks `ratio` against a budget (`{ max }` or `{ min }`), prints the result line, and returns
 * whether it is within. `bench` defaults to the running script's name.
 */
export function result({ bench = benchName(), figure, anchor, ratio, max, min }) {
  if ((max === undefined) === (min === undefined)) {
    throw new Error(`result ${figure}: give exactly one of max and min`);
  }
  if (!Number.isFinite(ratio)) throw new Error(`result ${figure}: ratio ${ratio} is not a number`);
  const ok = max !== undefined ? ratio <= max : ratio >= min;
  const line = {
    bench,
    figure,
    anchor,
    ratio: Number(ratio.toFixed(3)),
    budget: max !== undefined ? `<= ${max}` : `>= ${min}`,
    status: ok ? 'OK' : 'OVER',
  };
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(line)}\n`);
  if (!ok) over = true;
  return ok;
}

/** Prints the skipped line and the `SKIPPED <bench>: <reason>` line. */
export function skipped(reason, bench = benchName()) {
  process.stdout.write(`SKIPPED ${bench}: ${reason}\n`);
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ bench, skipped: reason })}\n`);
}

/** Parses every result line of a bench's stdout. */
export function parseResults(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(RESULT_PREFIX)) continue;
    try {
      out.push(JSON.parse(line.slice(RESULT_PREFIX.length)));
    } catch {
      // a torn line: run-all reports the bench's exit code instead
    }
  }
  return out;
}

let over = false;
/** Marks the run over budget without a result line (a budget checked some other way). */
export const markOver = () => {
  over = true;
};
/** Whether any result so far was OVER. */
export const isOver = () => over;

function benchName() {
  return path.basename(process.argv[1] ?? 'bench', '.mjs');
}

// ---- cleanup ----

const cleanups = [];
let cleaning;

/** Registers `fn` (sync or async) to run once at exit, on failure or on a signal; last in, first run. Returns a function that unregisters it. */
export function onCleanup(fn) {
  const entry = { fn };
  cleanups.push(entry);
  return () => {
    const i = cleanups.indexOf(entry);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/** Runs every registered cleanup once, newest first; errors are printed, not thrown. */
export async function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const { fn } = cleanups.pop();
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`cleanup: ${err instanceof Error ? err.message : err}\n`);
      }
    }
  })();
  return cleaning;
}

/** A new temporary directory under os.tmpdir(), removed at cleanup. */
export function tempDir(prefix = 'podmin-bench-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  onCleanup(remove);
  // Once more as the process exits: code still running between a signal's cleanup and the exit
  // (an awaited write that finished meanwhile) may have written into it again.
  process.once('exit', remove);
  return dir;
}

/**
 * Stops `child` at cleanup: SIGTERM, then SIGKILL after `graceMs`. A child spawned with
 * `detached: true` leads its own process group, and the whole group is signalled.
 */
export function killAtCleanup(child, { graceMs = 5000, group = false } = {}) {
  const remove = onCleanup(() => stopChild(child, { graceMs, group }));
  child.once('exit', () => remove());
  return child;
}

/** Signals `child` (or its process group) with SIGTERM and waits up to `graceMs` before SIGKILL. */
export async function stopChild(child, { graceMs = 5000, group = false } = {}) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const send = (signal) => {
    try {
      if (group) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      // already gone
    }
  };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  send('SIGTERM');
  let timer;
  const timedOut = new Promise(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)),
  );
  if ((await Promise.race([exited, timedOut])) === 'timeout') {
    send('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

/** Starts the S3 emulator in `stateDir` (stopped at cleanup); returns its endpoint. */
export function startEmulator(root, stateDir) {
  // Registered first: start.sh writes the PID file once the server answers.
  onCleanup(() =>
    spawnSync('bash', [path.join(root, 'tools/emulator/stop.sh'), stateDir], { stdio: 'ignore' }),
  );
  const r = spawnSync('bash', [path.join(root, 'tools/emulator/start.sh'), stateDir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const endpoint = /PODMIN_TEST_AWS_ENDPOINT=(\S+)/.exec(r.stdout ?? '')?.[1];
  if (r.status !== 0 || !endpoint) {
    throw new Error(`starting the S3 emulator: ${(r.stderr ?? '').trim() || `exit ${r.status}`}`);
  }
  return endpoint;
}

/**
 * Lets a signal that arrived be handled: a bench that runs synchronously (spawnSync, a long
 * computation) awaits this between steps, as signal handlers run only from the event loop.
 */
export const yieldToSignals = () => new Promise((resolve) => setImmediate(resolve));

let signalled = false;
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
for (const [signal, number] of Object.entries(SIGNALS)) {
  process.on(signal, () => {
    signalled = true;
    process.stderr.write(`${benchName()}: ${signal}, cleaning up\n`);
    // A second signal while cleaning up ends the process at once.
    process.removeAllListeners(signal);
    void cleanup().finally(() => process.exit(128 + number));
  });
}

/**
 * Runs a bench's body: exits 2 (after cleanup) when it throws, else 1 when a result was OVER
 * (or the body returned true, meaning over budget), else 0.
 */
export async function main(body) {
  let code;
  try {
    const overBudget = await body();
    code = overBudget === true || over ? 1 : 0;
  } catch (err) {
    // Killed: what failed is what the cleanup stopped.
    if (!signalled) {
      process.stderr.write(`${benchName()} failed: ${err instanceof Error ? err.stack : err}\n`);
    }
    code = 2;
  }
  await cleanup();
  process.exit(code);
}
