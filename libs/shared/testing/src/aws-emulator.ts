import { execFile, spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { readFile, writeFile, unlink } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './repo-root';

/** Where and how to reach the AWS-API emulator from a test. */
export interface AwsEmulator {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  endpoint: string;
  /** Region every test client uses. */
  region: string;
  /** Dummy credentials the emulator accepts. */
  credentials: { accessKeyId: string; secretAccessKey: string };
}

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'podmin-test', secretAccessKey: 'podmin-test-secret' };
const READY_TIMEOUT_MS = 30_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The running emulator recorded for this worker process, so later test files reuse it. */
interface EmulatorState {
  endpoint: string;
  pid: number;
}

// Jest gives every test file a fresh module registry, so this only dedupes calls within one
// file; the state file below shares one server across all files of a worker process.
let pending: Promise<AwsEmulator> | undefined;

/**
 * Returns the AWS-API emulator (moto_server) for this test process: `PODMIN_TEST_AWS_ENDPOINT`
 * when set, otherwise one server started on a free loopback port that lives as long as the
 * jest worker process.
 */
export function getAwsEmulator(): Promise<AwsEmulator> {
  // The SDK warns about the Node.js version on first client construction; tests need no noise.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  pending ??= resolveEmulator().catch((err: unknown) => {
    pending = undefined;
    throw err;
  });
  return pending;
}

async function resolveEmulator(): Promise<AwsEmulator> {
  const fromEnv = process.env['PODMIN_TEST_AWS_ENDPOINT'];
  if (fromEnv !== undefined && fromEnv !== '') {
    return describeEmulator(fromEnv.replace(/\/+$/, ''));
  }
  const stateFile = path.join(os.tmpdir(), `podmin-aws-emulator-${process.pid}.json`);
  const reused = await reuseRunning(stateFile);
  if (reused !== undefined) {
    return describeEmulator(reused);
  }
  const endpoint = await startEmulator(stateFile);
  return describeEmulator(endpoint);
}

function describeEmulator(endpoint: string): AwsEmulator {
  return { endpoint, region: REGION, credentials: { ...CREDENTIALS } };
}

async function reuseRunning(stateFile: string): Promise<string | undefined> {
  let state: EmulatorState;
  try {
    state = JSON.parse(await readFile(stateFile, 'utf8')) as EmulatorState;
  } catch {
    return undefined;
  }
  if (!isAlive(state.pid) || !(await answers(state.endpoint))) {
    await unlink(stateFile).catch(() => undefined);
    return undefined;
  }
  return state.endpoint;
}

async function startEmulator(stateFile: string): Promise<string> {
  const motoServer = await ensureInstalled();
  const python = path.join(path.dirname(motoServer), 'python');
  const port = await freeLoopbackPort();
  const endpoint = `http://127.0.0.1:${port}`;
  const logFile = path.join(os.tmpdir(), `podmin-aws-emulator-${process.pid}.log`);
  const logFd = openSync(logFile, 'w');
  // A watchdog thread ends the server when its parent (this worker) is gone, however the
  // worker ends: jest hands test files a copy of `process`, so 'exit' handlers registered
  // here are not reliable, and a crashed or killed worker runs none at all.
  const child = spawn(
    python,
    [
      '-c',
      WATCHDOG_LAUNCHER,
      path.join(repoRoot(), 'tools', 'emulator'),
      stateFile,
      logFile,
      '-H',
      '127.0.0.1',
      '-p',
      String(port),
    ],
    {
      stdio: ['ignore', logFd, logFd],
    },
  );
  closeSync(logFd);
  child.unref();
  const exited = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      reject(
        new Error(
          `moto_server exited early (code ${code ?? 'none'}, signal ${signal ?? 'none'}): ${logTail(logFile)}`,
        ),
      );
    });
  });
  exited.catch(() => undefined);
  const pid = child.pid;
  if (pid === undefined) {
    await exited;
    throw new Error('starting moto_server: no process id');
  }
  process.once('exit', () => {
    try {
      process.kill(pid);
    } catch {
      // already gone
    }
  });
  await Promise.race([waitUntilAnswering(endpoint, READY_TIMEOUT_MS), exited]).catch(
    (err: unknown) => {
      child.kill();
      throw new Error(`starting moto_server on ${endpoint}: ${String(err)}; log: ${logFile}`, {
        cause: err,
      });
    },
  );
  child.removeAllListeners('exit');
  const state: EmulatorState = { endpoint, pid };
  await writeFile(stateFile, JSON.stringify(state));
  return endpoint;
}

/** Python launcher: exits when the parent process changes, removing the state and log files. */
const WATCHDOG_LAUNCHER = `
import os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from serve import main  # moto_server with requests serialised (see tools/emulator/serve.py)
parent = os.getppid()
owned_files = sys.argv[2:4]
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    for owned in owned_files:
        try:
            os.unlink(owned)
        except OSError:
            pass
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
main(sys.argv[4:])
`;

function ensureInstalled(): Promise<string> {
  const script = path.join(repoRoot(), 'tools', 'setup', 'python-tools.sh');
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [script, 'moto_server'],
      { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(
              `installing the AWS emulator with ${script}: ${stderr.trim() || err.message}`,
              { cause: err },
            ),
          );
          return;
        }
        const bin = stdout.trim().split('\n').pop() ?? '';
        if (!existsSync(bin)) {
          reject(
            new Error(
              `installing the AWS emulator with ${script}: printed ${JSON.stringify(bin)}, not a file`,
            ),
          );
          return;
        }
        resolve(bin);
      },
    );
  });
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') {
          resolve(address.port);
        } else {
          reject(new Error('finding a free loopback port: no address'));
        }
      });
    });
  });
}

function answers(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`${endpoint}/moto-api/`, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

async function waitUntilAnswering(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(endpoint))) {
    if (Date.now() >= deadline) {
      throw new Error(`no answer within ${timeoutMs / 1000}s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function logTail(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}
