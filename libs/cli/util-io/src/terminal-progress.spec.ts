import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { bundleForNode } from '@podmin/testing';
import { formatBytes, formatDuration, viewProgress } from './progress-format';
import { TerminalReporter } from './terminal-reporter';

describe('progress formatting', () => {
  it('shows amounts, rate and time left in units people read', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(12 * 1024 * 1024 + 100)).toBe('12.0 MiB');
    expect(formatDuration(125)).toBe('2 min 5 s');
    const view = viewProgress('pulling', 10 * 1024 * 1024, 40 * 1024 * 1024, 'bytes', {
      startedAt: 0,
      startDone: 0,
      now: 2000,
    });
    expect(view).toMatchObject({
      amount: '10.0 MiB of 40.0 MiB',
      percent: '25%',
      rate: '5.0 MiB/s',
      eta: '6 s left',
      finished: false,
    });
  });
});

describe('TerminalReporter progress without a TTY', () => {
  it('writes plain lines at most once per interval, and the last one, to stderr only', () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let now = 0;
    const reporter = new TerminalReporter(
      { stdout, stderr, stdin: new PassThrough() },
      { now: () => now, plainProgressIntervalMs: 5000 },
    );
    const MiB = 1024 * 1024;
    for (let second = 0; second <= 12; second++) {
      now = second * 1000;
      reporter.progress('downloading kubelet', second * MiB, 12 * MiB, 'bytes');
    }
    reporter.result('done');
    expect(String(stdout.read())).toBe('done\n');
    expect(String(stderr.read()).split('\n')).toEqual([
      'downloading kubelet: 0 B of 12.0 MiB (0%), -, -',
      'downloading kubelet: 5.0 MiB of 12.0 MiB (41%), 1.0 MiB/s, 7 s left',
      'downloading kubelet: 10.0 MiB of 12.0 MiB (83%), 1.0 MiB/s, 2 s left',
      'downloading kubelet: 12.0 MiB of 12.0 MiB (100%), 1.0 MiB/s, done in 12 s',
      '',
    ]);
  });

  it('escapes control characters in labels', () => {
    const stderr = new PassThrough();
    const reporter = new TerminalReporter({
      stdout: new PassThrough(),
      stderr,
      stdin: new PassThrough(),
    });
    reporter.progress('pull \u001b[2Jx', 1, 1);
    expect(String(stderr.read())).toBe('pull \\x1b[2Jx: 1 of 1 (100%), -, done in 0 s\n');
  });
});

describe('TerminalReporter progress on a TTY', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tty-progress-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('draws bars with amount, rate and time left through a pseudo-terminal', async () => {
    // The real reporter, bundled with cli-progress, in a process whose stderr is the pty that
    // util-linux `script` allocates; script copies what the terminal received to its stdout.
    const bundle = path.join(dir, 'reporter.cjs');
    bundleForNode(path.join(__dirname, 'index.ts'), bundle);
    const driver = path.join(dir, 'driver.cjs');
    await writeFile(
      driver,
      `const { TerminalReporter } = require(${JSON.stringify(bundle)});
      const reporter = new TerminalReporter();
      const MiB = 1024 * 1024;
      let step = 0;
      const tick = setInterval(() => {
        step++;
        reporter.progress('pushing hello:v1', Math.min(step, 8) * 4 * MiB, 32 * MiB, 'bytes');
        if (step <= 4) reporter.progress('pushing world:v2', step, 4);
        if (step === 3) reporter.info('status line between bars');
        if (step >= 8) {
          clearInterval(tick);
          reporter.settled().then(() => reporter.result('registry.podmin.internal/apps/hello:v1'));
        }
      }, 120);
      `,
    );
    const { stdout } = await promisify(execFile)(
      'script',
      ['-qec', `stty cols 120; ${process.execPath} ${driver}`, '/dev/null'],
      { cwd: dir, timeout: 30_000, env: { ...process.env, TERM: 'xterm', COLUMNS: '120' } },
    );
    // Redrawn in place: cursor movements and line clears, not one line per update.
    expect(stdout).toMatch(new RegExp(`${String.fromCharCode(27)}\\[[0-9]*[GKA]`));
    expect(stdout).toMatch(
      /pushing hello:v1 \[[=-]+\] +\d+% \| [\d.]+ MiB of 32\.0 MiB \| [\d.]+ MiB\/s \| \d+ s left/,
    );
    expect(stdout).toMatch(
      /pushing hello:v1 \[=+\] 100% \| 32\.0 MiB of 32\.0 MiB \| [\d.]+ MiB\/s \| done in \d+ s/,
    );
    expect(stdout).toMatch(/pushing world:v2 \[=+\] 100% \| 4 of 4 \|/);
    expect(stdout).toContain('status line between bars');
    expect(stdout).toContain('registry.podmin.internal/apps/hello:v1');
    // No plain fallback lines on a terminal.
    expect(stdout).not.toContain('pushing hello:v1: ');
  }, 60_000);

  it('exits mid-transfer with line wrapping restored', async () => {
    const driver = path.join(dir, 'failing.cjs');
    await writeFile(
      driver,
      `const { TerminalReporter } = require(${JSON.stringify(path.join(dir, 'reporter.cjs'))});
      const reporter = new TerminalReporter();
      reporter.progress('pulling big:v1', 1024, 1024 * 1024, 'bytes');
      reporter.settled().then(() => {
        reporter.info('Error: pulling big:v1: connection reset');
        process.exitCode = 1;
      });
      `,
    );
    const failed = await promisify(execFile)(
      'script',
      ['-qec', `stty cols 120; ${process.execPath} ${driver}`, '/dev/null'],
      { cwd: dir, timeout: 20_000 },
    ).catch((err: { code: number; stdout: string }) => err);
    // The redraw timer does not hold the process: it ends (script reports its exit code).
    expect('code' in failed ? failed.code : 0).toBe(1);
    const esc = String.fromCharCode(27);
    expect(failed.stdout).toContain(`${esc}[?7l`);
    expect(failed.stdout.lastIndexOf(`${esc}[?7h`)).toBeGreaterThan(
      failed.stdout.lastIndexOf(`${esc}[?7l`),
    );
    expect(failed.stdout).toContain('Error: pulling big:v1: connection reset');
  }, 30_000);
});
