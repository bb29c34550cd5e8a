import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Every bench cleans up what it started when it is killed mid-run (issue 35): each one is
// started in its quick mode with a temporary directory of its own (TMPDIR) and a marker in its
// environment, which every process it starts inherits; once it has started a process (or
// written a temporary file) it gets SIGTERM, and then no process carries the marker, its
// temporary directory is empty and no network namespace it made is left. Benches name the
// namespaces they make after their PID (bench/dataplane.mjs: `db<pid>-…`), so one left is a
// namespace that appeared during the run with the bench's PID in its name (others on the same
// machine may make and remove namespaces meanwhile).
const REPO = path.resolve(__dirname, '../..');
const MARKER = 'PODMIN_BENCH_KILL_TEST';

/**
 * Each bench and its arguments: the quick mode, except for the two that start no process and
 * write no file (rollout, snapshot), which run longer so that the kill lands while they run
 * (they are killed once they have printed something, see `killMidRun`).
 */
const BENCHES: Array<[string, string[]]> = [
  ['agent', ['--quick']],
  ['cli-start', ['--quick']],
  ['deploy-preflight', ['1']],
  ['deploy-requests', []],
  ['election', ['2', '0.25']],
  ['list', ['--quick']],
  ['registry-pull', ['--quick']],
  ['rollout', []],
  ['snapshot', ['5']],
  ['dns', ['--quick']],
  ['dataplane', ['--quick']],
  ['trust-verify', ['--quick']],
];

/** Benches that start no process and write no file: running is shown by their output. */
const OUTPUT_ONLY = new Set(['rollout', 'snapshot']);

/** PIDs of the processes whose environment holds `MARKER=value` (the bench's descendants). */
function marked(value: string): number[] {
  const needle = Buffer.from(`${MARKER}=${value}\0`);
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`).includes(needle)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function netns(): string[] {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n').filter(Boolean).sort() : [];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts a bench, SIGTERMs it once it has started something, and reports what is left. */
async function killMidRun(name: string, args: string[]) {
  const marker = randomUUID();
  // Short: the agent bench's Unix sockets live below it (at most 107 bytes a path).
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pbk-'));
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, [MARKER]: marker };
  // The bench starts (and must stop) its own S3 emulator.
  delete env['PODMIN_TEST_AWS_ENDPOINT'];
  const netnsBefore = new Set(netns());
  const child = spawn(process.execPath, [path.join(REPO, 'bench', `${name}.mjs`), ...args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))),
  );
  let finished = false;
  void exited.then(() => (finished = true));
  // Mid-run: a process of its own running (or, for a bench that starts none, a temporary file).
  const deadline = Date.now() + 30_000;
  while (!finished && Date.now() < deadline) {
    const others = marked(marker).filter((p) => p !== child.pid);
    if (others.length > 0 || fs.readdirSync(tmp).length > 0) break;
    if (OUTPUT_ONLY.has(name) && output.trim() !== '') break;
    await sleep(100);
  }
  await sleep(500);
  const killedMidRun = !finished;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    exited,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 60_000))),
  ]);
  clearTimeout(timer);
  if (code === 'timeout') child.kill('SIGKILL');
  // A process SIGKILLed after its grace may take a moment to go.
  let left = marked(marker);
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await sleep(100);
    left = marked(marker);
  }
  const files = fs.readdirSync(tmp);
  const pid = String((child.pid ?? 0) % 100000);
  const namespaces = netns().filter((n) => !netnsBefore.has(n) && n.includes(pid));
  fs.rmSync(tmp, { recursive: true, force: true });
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return { code, killedMidRun, left, files, namespaces, output };
}

describe('every bench cleans up when killed mid-run', () => {
  it.each(BENCHES)(
    'bench/%s.mjs',
    async (name, args) => {
      const run = await killMidRun(name, args);
      const skipped = /^SKIPPED /m.test(run.output);
      // On a failure, the end of what the bench printed says why.
      const clean = run.left.length === 0 && run.files.length === 0 && run.namespaces.length === 0;
      if (!clean || (run.code !== 143 && !skipped)) {
        process.stdout.write(`${name}: exit ${String(run.code)}\n${run.output.slice(-3000)}\n`);
      }
      // Killed while running it exits 128 + 15 after cleaning up; a bench that cannot run here
      // says SKIPPED and exits 0 before anything could be killed.
      if (skipped && !run.killedMidRun) {
        process.stdout.write(`SKIPPED bench-kill ${name}: the bench skipped itself here\n`);
        expect({ name, code: run.code }).toEqual({ name, code: 0 });
      } else {
        expect({ name, killedMidRun: run.killedMidRun, code: run.code }).toEqual({
          name,
          killedMidRun: true,
          code: 143,
        });
      }
      expect({
        name,
        processes: run.left,
        files: run.files,
        namespaces: run.namespaces,
      }).toEqual({ name, processes: [], files: [], namespaces: [] });
    },
    120_000,
  );
});
