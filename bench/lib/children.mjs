// Child processes of a bench: started until ready, or run to their end, each killed at cleanup.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { killAtCleanup } from './bench.mjs';

/** Starts a child and resolves once `isReady(stdoutSoFar)` holds. */
export function start(command, args, isReady, options = {}) {
  const child = killAtCleanup(
    spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options }),
  );
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error(`${command} exited ${child.exitCode}`));
      if (await isReady(out)) return resolve({ child, output: () => out });
      if (Date.now() > deadline) return reject(new Error(`${command} did not start`));
      setTimeout(poll, 50);
    };
    void poll();
  });
}

/** Runs a command to its end without blocking the event loop (signals stay handled). */
export function run(command, args, { stdoutFile, env } = {}) {
  return new Promise((resolve, reject) => {
    // Into a file, stdout never blocks the command: a pipe that fills while this process is
    // descheduled would stall dnsperf's receive loop and count as the server's latency.
    const fd = stdoutFile === undefined ? 'pipe' : fs.openSync(stdoutFile, 'w');
    const child = killAtCleanup(spawn(command, args, { stdio: ['ignore', fd, 'pipe'], env }));
    if (typeof fd === 'number') fs.closeSync(fd);
    const out = [];
    const err = [];
    child.stdout?.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({
        status,
        stdout:
          stdoutFile === undefined
            ? Buffer.concat(out).toString()
            : fs.readFileSync(stdoutFile, 'utf8'),
        stderr: Buffer.concat(err).toString(),
      }),
    );
  });
}
