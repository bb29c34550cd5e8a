import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serializeReceipt } from '@podmin/util-receipts';

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
  cwd: string;
  env: Record<string, string>;
  run(args: string[], extraEnv?: Record<string, string>): Promise<CliRun>;
  cleanup(): void;
}

/** Creates a sandbox whose podmin runs see only temporary state. */
export function makeSandbox(extraEnv: Record<string, string> = {}): CliSandbox {
  if (!fs.existsSync(PODMIN_BIN))
    throw new Error(`${PODMIN_BIN} is missing: run \`npx nx run cli:build\` first`);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-e2e-'));
  const cwd = path.join(home, 'work');
  fs.mkdirSync(cwd);
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'xdg-config'),
    XDG_CACHE_HOME: path.join(home, 'xdg-cache'),
    XDG_DATA_HOME: path.join(home, 'xdg-data'),
    XDG_RUNTIME_DIR: path.join(home, 'xdg-run'),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extraEnv,
  };
  return {
    home,
    cwd,
    env,
    run: (args, more = {}) => runCli(args, { cwd, env: { ...env, ...more } }),
    cleanup: () => fs.rmSync(home, { recursive: true, force: true }),
  };
}

/**
 * Runs the bundled CLI once (`bin`: another bundle than dist/bin/podmin.cjs; `stdin`: piped in;
 * stdin is closed at once either way).
 */
export function runCli(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    bin?: string;
    stdin?: string | Buffer;
  },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? PODMIN_BIN, ...args], {
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

/** A receipt as an agent writes it, for node `node` of NodeGroup default. */
export function agentReceipt(
  node: string,
  pods: Array<{ deployment: string; revision: string }> = [],
): string {
  return serializeReceipt({
    schema: 1,
    nodegroup: 'default',
    node,
    agentVersion: '0.1.0',
    indexEtag: null,
    time: new Date().toISOString(),
    heartbeatSeconds: 300,
    kubelet: 'absent',
    error: null,
    pods: pods.map((p) => ({
      ...p,
      ready: null,
      restarts: null,
      reason: null,
      identityExpiry: null,
    })),
    omittedPods: 0,
  });
}
