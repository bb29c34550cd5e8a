import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Output of a finished command. */
export interface CommandResult {
  /** Exit code (null when killed by a signal). */
  code: number | null;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Runs a command to completion with a deadline; never rejects on a non-zero exit. */
export function run(
  file: string,
  args: readonly string[],
  timeoutMs = 120_000,
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr: err !== null && stderr === '' ? err.message : stderr });
      },
    );
  });
}

/** The absolute path of `command` on PATH, or undefined. */
export function which(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Prints the standard skip line so a missing tool never passes silently. */
export function reportSkip(what: string, reason: string): void {
  process.stderr.write(`SKIPPED integration:${what}: ${reason}\n`);
}

/** A containerd daemon private to one test, and its `ctr` address. */
export interface TestContainerd {
  /** gRPC socket for `ctr -a`. */
  address: string;
  /** containerd's root directory (content store, snapshots). */
  root: string;
  /** Stops the daemon and waits for it to exit. */
  stop: () => Promise<void>;
}

/**
 * Starts containerd with its root, state and sockets under `dir` and the CRI plugin off;
 * returns a reason string instead when it cannot run here (not root, or it fails to answer).
 */
export async function startContainerd(dir: string): Promise<TestContainerd | string> {
  const containerd = which('containerd');
  const ctr = which('ctr');
  if (containerd === undefined || ctr === undefined) {
    return 'containerd or ctr is not installed (run tools/setup/apt-deps.sh)';
  }
  if (process.getuid?.() !== 0) {
    return 'containerd needs root for its snapshotter and mounts';
  }
  const root = path.join(dir, 'root');
  const address = path.join(dir, 'containerd.sock');
  await mkdir(root, { recursive: true });
  const config = [
    'version = 2',
    `root = ${JSON.stringify(root)}`,
    `state = ${JSON.stringify(path.join(dir, 'state'))}`,
    'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
    '[grpc]',
    `  address = ${JSON.stringify(address)}`,
    '[ttrpc]',
    `  address = ${JSON.stringify(`${address}.ttrpc`)}`,
    '[debug]',
    `  address = ${JSON.stringify(path.join(dir, 'debug.sock'))}`,
    '[metrics]',
    '  address = ""',
    '',
  ].join('\n');
  const configFile = path.join(dir, 'config.toml');
  await writeFile(configFile, config);
  const logFile = path.join(dir, 'containerd.log');
  const log = openSync(logFile, 'w');
  const child: ChildProcess = spawn(containerd, ['--config', configFile], {
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => ((exited = true), resolve())),
  );
  const stop = async (): Promise<void> => {
    if (!exited) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
    if (!exited) child.kill('SIGKILL');
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !exited) {
    if (existsSync(address) && (await run(ctr, ['-a', address, 'version'], 5_000)).code === 0) {
      return { address, root, stop };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  return `containerd did not answer within 20 s: ${readFileSync(logFile, 'utf8').split('\n').slice(-5).join(' | ')}`;
}
