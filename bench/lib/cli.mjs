// The podmin CLI as the benches run it: the bundle, the environment of a temporary HOME, the
// emulator's endpoint and credentials, and one run of the CLI stopped at cleanup.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { killAtCleanup } from './bench.mjs';

const root = path.resolve(import.meta.dirname, '../..');

/** The bundle `npx nx run cli:build` writes. */
export const PODMIN_BIN = path.join(root, 'dist/bin/podmin.cjs');

/** HOME and the XDG config, data and cache directories below it (`c`, `d`, `k`). */
export function homeEnv(home) {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'c'),
    XDG_DATA_HOME: path.join(home, 'd'),
    XDG_CACHE_HOME: path.join(home, 'k'),
  };
}

/**
 * Points the CLI's AWS clients at `endpoint` (the emulator, or a proxy in front of it) with the
 * emulator's test credentials: only S3 by default, every service with `allServices`.
 */
export function emulatorEnv(endpoint, { allServices = false } = {}) {
  return {
    [allServices ? 'AWS_ENDPOINT_URL' : 'AWS_ENDPOINT_URL_S3']: endpoint,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/**
 * `podmin deploy web -g default --image IMAGE` as the benches run it: the commit path alone (no
 * preflight, no pinning), then `rest` (e.g. `-f FILE`, `--service`, `--wait`).
 */
export function deployWebArgs(image, ...rest) {
  return [
    'deploy',
    '--no-preflight',
    '--no-pin',
    'web',
    '-g',
    'default',
    '--image',
    image,
    ...rest,
  ];
}

/**
 * Runs the CLI once with `args` (stopped at cleanup), stdout discarded; `input` is piped to its
 * stdin, `nodeArgs` go before the bundle (a `--require` preload). Resolves with its wall time in
 * ms and its stderr, rejects with its stderr when it exits non-zero.
 */
export function runPodmin(args, { cwd, env, input, nodeArgs = [] }) {
  return new Promise((resolve, reject) => {
    const begin = performance.now();
    const child = killAtCleanup(
      spawn(process.execPath, [...nodeArgs, PODMIN_BIN, ...args], {
        cwd,
        env,
        stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
      }),
    );
    if (input !== undefined) child.stdin.end(input);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - begin, stderr })
        : reject(new Error(`podmin ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}
