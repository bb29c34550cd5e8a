import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempHome } from '@podmin/testing';
import { serializeReceipt, type PodReceipt } from '@podmin/util-receipts';

/** The deploy command lines the flows run, shared with the in-process specs. */
export { deployArgs, deployWebArgs } from '../__fixtures__/deploy-args';

/** Path of the bundled CLI the black-box tests run (built by `nx run cli:build`). */
export const PODMIN_BIN = path.resolve(__dirname, '../../../../dist/bin/podmin.cjs');

/** Result of one CLI process. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temporary HOME with its own XDG directories and a working directory. */
export interface CliSandbox {
  home: string;
  /** XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_CACHE_HOME (podmin's directories are `<dir>/podmin`). */
  configHome: string;
  dataHome: string;
  cacheHome: string;
  cwd: string;
  env: Record<string, string>;
  run(args: string[], extraEnv?: Record<string, string>): Promise<CliRun>;
  cleanup(): void;
}

/**
 * Creates a sandbox whose podmin runs see only temporary state: a temporary HOME with its XDG
 * directories ({@link makeTempHome}), a working directory in it, and only PATH from this
 * process's environment.
 */
export function makeSandbox(extraEnv: Record<string, string> = {}): CliSandbox {
  if (!fs.existsSync(PODMIN_BIN))
    throw new Error(`${PODMIN_BIN} is missing: run \`npx nx run cli:build\` first`);
  const temp = makeTempHome('podmin-e2e');
  const cwd = path.join(temp.home, 'work');
  fs.mkdirSync(cwd);
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    ...temp.env,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extraEnv,
  };
  const xdg = (name: string): string => {
    const dir = env[name];
    if (dir === undefined) throw new Error(`makeSandbox: ${name} is not set`);
    return dir;
  };
  return {
    home: temp.home,
    configHome: xdg('XDG_CONFIG_HOME'),
    dataHome: xdg('XDG_DATA_HOME'),
    cacheHome: xdg('XDG_CACHE_HOME'),
    cwd,
    env,
    run: (args, more = {}) => runCli(args, { cwd, env: { ...env, ...more } }),
    cleanup: temp.cleanup,
  };
}

/**
 * A sandbox ({@link makeSandbox} with `extraEnv`) connected to cluster `demo` on the local
 * provider, its bucket directory at `<home>/bucket`.
 */
export async function connectedLocalSandbox(
  extraEnv: Record<string, string> = {},
): Promise<{ sandbox: CliSandbox; bucket: string }> {
  const sandbox = makeSandbox(extraEnv);
  const bucket = path.join(sandbox.home, 'bucket');
  const connected = await sandbox.run([
    'connect',
    'demo',
    '--provider',
    'local',
    '--bucket',
    bucket,
  ]);
  expect(connected.code).toBe(0);
  return { sandbox, bucket };
}

/**
 * Runs `args` in `sandbox`, asserts its exit code (naming the arguments when it differs) and
 * that stderr contains every one of `fragments`; returns the run for further checks.
 */
export async function expectExit(
  sandbox: CliSandbox,
  args: string[],
  code: number,
  ...fragments: string[]
): Promise<CliRun> {
  const run = await sandbox.run(args);
  expect({ args, code: run.code }).toEqual({ args, code });
  for (const fragment of fragments) expect(run.stderr).toContain(fragment);
  return run;
}

/** The arguments of `podmin connect <cluster>` to `bucket` in `region` on AWS (the emulator). */
export function awsConnectArgs(cluster: string, region: string, bucket: string): string[] {
  return ['connect', cluster, '--provider', 'aws', '--region', region, '--bucket', bucket];
}

/**
 * Runs the bundled CLI once (`bin`: another bundle than dist/bin/podmin.cjs; `stdin`: piped in;
 * stdin is closed at once either way; `via`: a command that runs node for it, e.g. `setpriv …`).
 */
export function runCli(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    bin?: string;
    stdin?: string | Buffer;
    via?: readonly [string, ...string[]];
  },
): Promise<CliRun> {
  const node = [process.execPath, options.bin ?? PODMIN_BIN, ...args];
  const [command, ...rest] = options.via === undefined ? node : [...options.via, ...node];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, rest, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Content fingerprint of a directory tree: relative path → sha256 (used to prove nothing changed). */
export function snapshotDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  const walk = (d: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else
        out[path.relative(dir, p)] = crypto
          .createHash('sha256')
          .update(fs.readFileSync(p))
          .digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * A receipt as an agent writes it, for node `node` of NodeGroup default: each Pod's readiness
 * unknown unless it says otherwise, and the kubelet `absent` unless `kubelet` says `ok`.
 */
export function agentReceipt(
  node: string,
  pods: Array<Pick<PodReceipt, 'deployment' | 'revision'> & Partial<PodReceipt>> = [],
  kubelet: 'ok' | 'absent' = 'absent',
): string {
  return serializeReceipt({
    schema: 1,
    nodegroup: 'default',
    node,
    agentVersion: '0.1.0',
    indexEtag: null,
    time: new Date().toISOString(),
    heartbeatSeconds: 300,
    kubelet,
    error: null,
    pods: pods.map((p) => ({
      ready: null,
      restarts: null,
      reason: null,
      identityExpiry: null,
      ...p,
    })),
    omittedPods: 0,
  });
}
