// Fault injection and probes for the chaos tier (agent-chaos.chaos-spec.ts), on top of the
// network-namespace harness: an S3 emulator inside the bridge namespace behind a request
// counter, libfaketime for a skewed node clock, and bounded probes of a node's /readyz and
// agent-dns from inside its namespace.
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { NetnsCluster, NetnsNode } from './netns-cluster';
import { NodeProcess } from './node-process';

const REPO_ROOT = path.resolve(__dirname, '../../../..');

/** libfaketime's preload library as Debian installs it (`dpkg -L libfaketime`), or undefined. */
export function faketimeLibrary(): string | undefined {
  const r = spawnSync('dpkg', ['-L', 'libfaketime'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return undefined;
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.endsWith('/libfaketime.so.1') && fs.existsSync(l));
}

/**
 * Environment that runs a process, and every process it starts (they inherit it), with its wall
 * clock `offset` off (`+60s`, `-60s`): OpenSSL's certificate checks and `Date` see it, while the
 * monotonic clock stays true as on a real machine whose clock is merely set wrong.
 */
export function skewedClockEnv(library: string, offset: string): Record<string, string> {
  return {
    LD_PRELOAD: library,
    FAKETIME: offset,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** moto_server's Python from the project's cached venv (tools/setup/python-tools.sh), or undefined. */
export function motoPython(): string | undefined {
  const r = spawnSync('bash', [path.join(REPO_ROOT, 'tools/setup/python-tools.sh'), 'python'], {
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  if (r.status !== 0) return undefined;
  const python = r.stdout.trim().split('\n').pop() ?? '';
  return python !== '' && fs.existsSync(python) ? python : undefined;
}

/** One request the counter forwarded. */
export interface CountedRequest {
  /** Arrival, epoch ms (this machine's clock). */
  at: number;
  /** The sending node's address, or `test`. */
  source: string;
  method: string;
  path: string;
}

/** moto's request port inside the bridge namespace (loopback there), and the counter's. */
const MOTO_PORT = 4567;
const COUNTER_PORT = 4566;

/**
 * The S3 (and SSM) emulator for one test, inside the bridge namespace: moto_server on that
 * namespace's loopback behind a request counter on `[bridge address]:4566`, which every node
 * reaches; the test process reaches it through a loopback port of its own that forwards to the
 * counter's Unix socket. {@link pause} SIGSTOPs moto (the counter keeps accepting, as the kernel's
 * backlog would), {@link resume} SIGCONTs it.
 */
export class BridgeS3 {
  private constructor(
    private readonly moto: NodeProcess,
    private readonly counter: NodeProcess,
    private readonly forwarder: net.Server,
    private readonly logFile: string,
    /** What a node sets as AWS_ENDPOINT_URL. */
    readonly nodeEndpoint: string,
    /** What the test process's clients use. */
    readonly testEndpoint: string,
  ) {}

  /** Starts moto and the counter in `cluster`'s bridge namespace; files go under `work`. */
  static async start(cluster: NetnsCluster, python: string, work: string): Promise<BridgeS3> {
    const bridge = cluster.bridge;
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
    const moto = new NodeProcess(
      bridge,
      [
        python,
        path.join(REPO_ROOT, 'tools/emulator/serve.py'),
        '-H',
        '::1',
        '-p',
        String(MOTO_PORT),
      ],
      env,
    );
    const logFile = path.join(work, 's3-requests.log');
    const socket = path.join(work, 's3-counter.sock');
    const counter = new NodeProcess(
      bridge,
      [
        process.execPath,
        path.join(__dirname, 's3-request-counter.cjs'),
        bridge.address,
        String(COUNTER_PORT),
        socket,
        '::1',
        String(MOTO_PORT),
        logFile,
      ],
      env,
    );
    const forwarder = net.createServer((c) => {
      const upstream = net.connect({ path: socket });
      c.pipe(upstream).pipe(c);
      const end = (): void => {
        c.destroy();
        upstream.destroy();
      };
      c.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((resolve, reject) => {
      forwarder.once('error', reject);
      forwarder.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (forwarder.address() as net.AddressInfo).port;
    const s3 = new BridgeS3(
      moto,
      counter,
      forwarder,
      logFile,
      `http://[${bridge.address}]:${COUNTER_PORT}`,
      `http://127.0.0.1:${port}`,
    );
    // Bounded: moto imports in about two seconds; a server that never answers fails the test.
    const deadline = Date.now() + 30_000;
    const up = (): boolean =>
      counter.find('listen unix').length > 0 &&
      cluster.exec(bridge, 'curl', [
        '-s',
        '-o',
        '/dev/null',
        '--max-time',
        '1',
        `http://[::1]:${MOTO_PORT}/moto-api/`,
      ]).status === 0;
    while (!up()) {
      if (Date.now() > deadline) {
        await s3.stop();
        throw new Error(
          `moto_server and the request counter did not answer in the bridge namespace within 30 s\n` +
            `moto: ${moto.output().slice(-2000)}\ncounter: ${counter.output().slice(-1000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    return s3;
  }

  /** Every request counted so far. */
  requests(): CountedRequest[] {
    let text = '';
    try {
      text = fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [at, source, method, p] = l.split(' ');
        return { at: Number(at), source: source ?? '', method: method ?? '', path: p ?? '' };
      });
  }

  /** Makes the emulator unreachable: it stops answering (SIGSTOP). */
  pause(): void {
    this.moto.signal('SIGSTOP');
  }

  /** Brings it back (SIGCONT). */
  resume(): void {
    this.moto.signal('SIGCONT');
  }

  /** Stops moto, the counter and the forwarder; never throws. */
  async stop(): Promise<void> {
    await Promise.all([this.moto.kill(), this.counter.kill()]);
    await new Promise<void>((resolve) => this.forwarder.close(() => resolve()));
  }
}

/** What a command run inside a namespace returned (status null: killed at its deadline). */
export interface ExecResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command inside a node's namespace without blocking this process (so log readers and
 * samplers keep their timing), killed at its deadline.
 */
export function execIn(
  node: NetnsNode,
  cmd: string,
  args: readonly string[],
  timeoutMs = 5_000,
): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      'ip',
      ['netns', 'exec', node.ns, cmd, ...args],
      { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const code = (err as { code?: unknown } | null)?.code;
        resolve({ status: err ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** A node's `/readyz` as seen from inside its namespace: HTTP status (0: no answer) and body. */
export async function readyz(node: NetnsNode): Promise<{ status: number; body: string }> {
  const r = await execIn(node, 'curl', [
    '-s',
    '--max-time',
    '2',
    '-w',
    '\n%{http_code}',
    'http://127.0.0.1:9440/readyz',
  ]);
  const cut = r.stdout.lastIndexOf('\n');
  return {
    status: Number(r.stdout.slice(cut + 1)) || 0,
    body: r.stdout.slice(0, Math.max(0, cut)),
  };
}

/**
 * One AAAA query to a node's agent-dns (127.0.0.1:1053) from inside its namespace with the real
 * dig, bounded by `+time=1 +tries=1`: the answer (`+short`, empty when none) and how long it took.
 */
export async function dig(
  node: NetnsNode,
  name: string,
  transport: 'udp' | 'tcp' = 'udp',
): Promise<{ answer: string; ms: number }> {
  const started = performance.now();
  const r = await execIn(node, 'dig', [
    '@127.0.0.1',
    '-p',
    '1053',
    '+short',
    '+time=1',
    '+tries=1',
    ...(transport === 'tcp' ? ['+tcp'] : []),
    name,
    'AAAA',
  ]);
  return { answer: r.stdout.trim(), ms: Math.round(performance.now() - started) };
}

/** Every regular file under `dir` (relative path → SHA-256 of its bytes), sorted by path; `{}` when `dir` is absent. */
export function fileTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile()) {
        try {
          out[r] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
        } catch {
          out[r] = 'unreadable'; // Replaced or removed between the listing and the read.
        }
      }
    }
  };
  walk(dir, '');
  return out;
}

/** The flood script: idle TCP connections held open from inside a node's namespace. */
export function startTcpFlood(
  node: NetnsNode,
  host: string,
  port: number,
  count: number,
): NodeProcess {
  return new NodeProcess(
    node,
    [
      process.execPath,
      path.join(__dirname, 'tcp-idle-flood.cjs'),
      host,
      String(port),
      String(count),
    ],
    { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  );
}
