import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isRoot, which } from '@podmin/testing';

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

/** A containerd daemon private to one test, and its `ctr` address. */
export interface TestContainerd {
  /** gRPC socket for `ctr -a`. */
  address: string;
  /** containerd's root directory (content store, snapshots). */
  root: string;
  /** Stops the daemon and waits for it to exit. */
  stop: () => Promise<void>;
}

/** Why containerd cannot run for a test here (not installed, not root), or undefined. */
export function containerdUnusable(): string | undefined {
  if (which('containerd') === undefined || which('ctr') === undefined)
    return 'containerd or ctr is not installed (run tools/setup/apt-deps.sh)';
  if (!isRoot()) return 'containerd needs root for its snapshotter and mounts';
  return undefined;
}

/**
 * Starts containerd with its root, state and sockets under `dir` and the CRI plugin off, where
 * {@link containerdUnusable} says it can run; throws when it fails to answer.
 */
export async function startContainerd(dir: string): Promise<TestContainerd> {
  const unusable = containerdUnusable();
  if (unusable !== undefined) throw new Error(`starting containerd: ${unusable}`);
  const containerd = which('containerd') ?? 'containerd';
  const ctr = which('ctr') ?? 'ctr';
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
  throw new Error(
    `containerd did not answer within 20 s: ${readFileSync(logFile, 'utf8').split('\n').slice(-5).join(' | ')}`,
  );
}
