import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline';
import { isChildMessage, type SupervisorMessage } from '@podmin/agent-contracts';
import { SERVICE_STOP_GRACE_MS } from '@podmin/agent-util-config';
import type { JsonLogger } from '@podmin/agent-util-logging';
import { requestSlice } from './scheduling';

/** One supervised service process. */
export interface ServiceSpec {
  /** Short name, e.g. `registry`. */
  name: string;
  /** Script run with Node (a bundled `agent-<name>.cjs`). */
  script: string;
  args: readonly string[];
  /** Environment on top of the supervisor's (node facts read once at start, e.g. from IMDS). */
  env?: Readonly<Record<string, string>>;
  /** Position in the shutdown order (lower stops first). */
  stopOrder: number;
  /** Pause after this service stops before stopping the next, logged with its reason. */
  pauseAfterStop?: { readonly ms: number; readonly why: string };
  /** How the process trades speed for memory (default `fast`); see `serviceExecArgv`. */
  memory?: MemoryProfile;
  /**
   * CPU niceness (0 default). Background work (the leader's snapshot computation) yields the
   * CPU to latency-sensitive processes (DNS answers) on a small node.
   */
  nice?: number;
  /**
   * The EEVDF slice (ns) its threads ask for: a latency-critical service (DNS answers) asks
   * for a short one ({@link SHORT_SLICE_NS}), so it preempts background work on waking.
   */
  sliceNs?: number;
  /**
   * The service counts as ready only once it has reported itself healthy (staticpod: the node
   * has converged to its desired state at least once), not merely once it started.
   */
  readyAfterHealthy?: boolean;
}

/**
 * `lean`: a control-plane service without a hot path (a few calls per poll interval), run by
 * V8's interpreter alone and with glibc returning freed memory eagerly. `fast`: a service with a
 * data path (registry, DNS, dataplane), which keeps the optimizing compiler and glibc's defaults
 * apart from the arena cap.
 */
export type MemoryProfile = 'lean' | 'fast';

/** Restart policy of crashed services. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** A service that ran this long has its backoff reset. */
  resetAfterMs: number;
}

/** Observable state of one service. */
export interface ServiceStatus {
  name: string;
  state: 'starting' | 'running' | 'backoff' | 'stopping' | 'stopped';
  ready: boolean;
  /** The service's own health report (e.g. the last reconcile pass); null until it reports. */
  healthy: boolean | null;
  /** Why the service reported itself unhealthy. */
  detail: string | null;
  pid: number | null;
  restarts: number;
  lastExit: string | null;
}

/** How the supervisor starts a process (injected so tests can use any script). */
export type Launcher = (spec: ServiceSpec) => ChildProcess;

/*
 * Memory settings of the service processes. Each was measured alone, idle, on the local provider
 * (staticpod, identity and registry forked as the supervisor forks them; RSS per process; the
 * noise between runs is about ±2 MiB):
 * - `--max-semi-space-size=1` with `--optimize-for-size`: the processes are idle most of the
 *   time, and a 16 MiB nursery each is resident memory spent on nothing; V8's size-over-speed
 *   heuristics besides (−7.7 MiB each, both together).
 * - `MALLOC_ARENA_MAX=2`: glibc gives every thread that allocates (V8's compiler and GC
 *   workers, libuv's pool) an arena of its own whose freed pages stay resident (−1.6 MiB each).
 * - lean only, `--lite-mode`: no optimizing compiler, so neither its code in the node binary
 *   (file-backed, yet counted in each process's RSS) nor its zones are touched (staticpod 67.3 →
 *   61.2 MiB, identity 73.6 → 68.3). It disables WebAssembly too, and with it the global fetch()
 *   (undici parses HTTP with wasm): a lean service must not use fetch. long.js's optional wasm
 *   falls back to JavaScript. `--no-expose-wasm` says so explicitly: lite mode alone makes
 *   Node print "disabling flag --expose_wasm due to conflicting flags" on every start.
 * - lean only, `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` at 64 KiB: starting leaves
 *   freed chunks behind that glibc would otherwise keep (−2.3 MiB each on top of lite mode). Not
 *   for a data path: every 64 KiB stream chunk would cost an mmap and a munmap.
 * - every process, supervisor included, gives back the clean file pages it touched while starting
 *   (libs/agent/data-access-memory): about 38 MiB of each process's RSS is the node binary's
 *   pages, and 11–19 MiB of them remain resident once idle (seven processes: 433.9 → 271.2 MiB
 *   in total; PSS 170 → 171 MiB, as those pages were shared all along).
 * Measured and not kept: `--jitless` (lite mode's saving, without anything more), `--no-opt`
 * (two thirds of it), `--max-lazy`, `--single-threaded-gc`, `--single-threaded`,
 * `--v8-pool-size=0`, `--max-old-space-size=128`, `UV_THREADPOOL_SIZE=1` and a forced GC after
 * start (each within the noise).
 * Tried for the `fast` profile and not kept: without `--optimize-for-size` the registry's S3
 * pull ran 486–516 MiB/s instead of 289–337 (bench/registry-pull.mjs, 128 MiB from the
 * emulator), but under 200 stalled clients it grew +91 to +100 MiB against a 64 MiB budget
 * (agent-registry-memory.integration-spec.ts; +27 MiB with the flag). The gain is V8's heap
 * growing faster (fewer collections), not its compiler: `--heap-growing-percent=20` alone kept
 * +28 MiB and 342–352 MiB/s, 50 gave +36 MiB and 334, 100 gave +48 MiB and 354.
 * - fast only, `--single-threaded-gc`: with a 1 MiB nursery a blob pull scavenges every few
 *   MiB, and each scavenge woke V8's four helper threads, which spent more CPU than they saved.
 *   A 256 MiB pull from the S3 emulator took 1,068 ms of CPU (helpers ~100 ms each, the main
 *   thread 506) and 971–1,105 ms over three runs; with the flag 503–663 ms, and 298–377 →
 *   400–512 MiB/s (means of 6 pulls, interleaved). `--no-memory-reducer` cut full collections
 *   from 87 to 26 per 6 pulls but neither CPU nor throughput moved.
 */

/** V8 settings every service process starts with (see the measurements above). */
export const SERVICE_EXEC_ARGV: readonly string[] = [
  '--max-semi-space-size=1',
  '--optimize-for-size',
];

/** V8 settings a `fast` service adds. */
export const FAST_EXEC_ARGV: readonly string[] = ['--single-threaded-gc'];

/** V8 settings a `lean` service adds. */
export const LEAN_EXEC_ARGV: readonly string[] = ['--lite-mode', '--no-expose-wasm'];

/** Environment every service process gets on top of the supervisor's. */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** Environment a `lean` service adds. */
export const LEAN_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '65536',
  MALLOC_TRIM_THRESHOLD_: '65536',
};

/** The Node options a service process starts with, by its memory profile. */
export function serviceExecArgv(spec: Pick<ServiceSpec, 'memory'>): string[] {
  return [...SERVICE_EXEC_ARGV, ...(spec.memory === 'lean' ? LEAN_EXEC_ARGV : FAST_EXEC_ARGV)];
}

/** The environment a service process starts with: `base`, the spec's own, then its profile's. */
export function serviceEnv(
  spec: Pick<ServiceSpec, 'memory' | 'env'>,
  base: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string | undefined> {
  return { ...base, ...spec.env, ...SERVICE_ENV, ...(spec.memory === 'lean' ? LEAN_ENV : {}) };
}

/**
 * The `nice` program, which starts a process at a niceness from its first instruction. Renicing
 * a child once it runs reaches only its main thread: V8's compiler and GC helper threads it
 * created before keep the old niceness (Linux sets niceness per thread).
 */
const NICE_PROGRAM = ['/usr/bin/nice', '/bin/nice'].find((file) => fs.existsSync(file));

/** Forks a Node script with an IPC channel, piped stdout/stderr and its profile's settings. */
export const forkLauncher: Launcher = (spec) => {
  const execArgv = serviceExecArgv(spec);
  const niced = spec.nice !== undefined && spec.nice !== 0 && NICE_PROGRAM !== undefined;
  const child = fork(spec.script, [...spec.args], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    ...(niced
      ? {
          execPath: NICE_PROGRAM,
          execArgv: ['-n', String(spec.nice), process.execPath, ...execArgv],
        }
      : { execArgv }),
    env: serviceEnv(spec),
  });
  if (spec.sliceNs !== undefined) {
    // Once at the start (threads created later inherit it) and again at the first message,
    // for the threads Node started in between.
    const ask = () => {
      if (child.pid !== undefined) requestSlice(child.pid, spec.sliceNs as number);
    };
    child.once('spawn', ask);
    child.once('message', ask);
  }
  if (spec.nice && !niced && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, spec.nice);
    } catch {
      // Lowering a child's priority is always allowed; a failure means it already exited.
    }
  }
  return child;
};

interface Slot {
  spec: ServiceSpec;
  status: ServiceStatus;
  child: ChildProcess | undefined;
  startedAt: number;
  delayMs: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * How long a service has to exit after the stop word (SIGTERM without IPC) before it is killed
 * (`SERVICE_STOP_GRACE_MS`). Each service process bounds its own shutdown below it
 * (`SERVICE_SHUTDOWN_GRACE_MS`, data-access-runtime), so this kill is for a process that hangs.
 */
export const STOP_GRACE_MS = SERVICE_STOP_GRACE_MS;

/**
 * The longest {@link Supervisor.stop} takes for `specs`: every service's stop grace plus every
 * pause between them (podmin-agent's systemd TimeoutStopSec must leave room for it).
 */
export function stopBoundMs(specs: readonly Pick<ServiceSpec, 'pauseAfterStop'>[]): number {
  return specs.reduce((sum, s) => sum + STOP_GRACE_MS + (s.pauseAfterStop?.ms ?? 0), 0);
}

/** Starts service processes, restarts crashed ones with backoff and stops them in order. */
export class Supervisor {
  private readonly slots: Slot[];
  private stopping = false;

  constructor(
    specs: readonly ServiceSpec[],
    private readonly log: JsonLogger,
    private readonly backoff: BackoffPolicy = {
      initialMs: 500,
      maxMs: 30_000,
      resetAfterMs: 60_000,
    },
    private readonly launch: Launcher = forkLauncher,
  ) {
    this.slots = specs.map((spec) => ({
      spec,
      status: {
        name: spec.name,
        state: 'stopped',
        ready: false,
        healthy: null,
        detail: null,
        pid: null,
        restarts: 0,
        lastExit: null,
      },
      child: undefined,
      startedAt: 0,
      delayMs: backoff.initialMs,
      timer: undefined,
    }));
  }

  /** Starts every service. */
  start(): void {
    for (const slot of this.slots) this.spawn(slot);
  }

  /** A snapshot of every service's state. */
  statuses(): ServiceStatus[] {
    return this.slots.map((s) => ({ ...s.status }));
  }

  /** True when every service process is running and none reports itself unhealthy. */
  healthy(): boolean {
    return this.slots.every((s) => s.status.state === 'running' && s.status.healthy !== false);
  }

  /**
   * True when the agent is healthy and every service has finished starting (reported ready, and
   * reported healthy where its spec says `readyAfterHealthy`): a fault that makes `/healthz`
   * fail always makes `/readyz` fail too.
   */
  ready(): boolean {
    return (
      this.healthy() &&
      this.slots.every(
        (s) => s.status.ready && (s.spec.readyAfterHealthy !== true || s.status.healthy === true),
      )
    );
  }

  /**
   * Stops services one by one in stop order (the IPC stop word, or SIGTERM to a process without
   * IPC; SIGKILL after a grace period), with each spec's pause after it; at most
   * {@link stopBoundMs} of the specs. Service processes ignore SIGTERM and SIGINT while their
   * supervisor lives, so a signal to the whole process group stops them only through this.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const slot of this.slots) if (slot.timer) clearTimeout(slot.timer);
    const ordered = [...this.slots].sort((a, b) => a.spec.stopOrder - b.spec.stopOrder);
    for (const slot of ordered) {
      await this.stopOne(slot);
      const pause = slot.spec.pauseAfterStop;
      if (pause && pause.ms > 0) {
        this.log.event('info', pause.why, { after: slot.spec.name, ms: pause.ms });
        await new Promise((r) => setTimeout(r, pause.ms));
      }
    }
  }

  private spawn(slot: Slot): void {
    slot.timer = undefined;
    slot.status.state = 'starting';
    slot.status.ready = false;
    slot.status.healthy = null;
    slot.status.detail = null;
    slot.startedAt = Date.now();
    let child: ChildProcess;
    try {
      child = this.launch(slot.spec);
    } catch (err) {
      this.scheduleRestart(slot, `spawn failed: ${(err as Error).message}`);
      return;
    }
    slot.child = child;
    slot.status.pid = child.pid ?? null;
    this.log.event('info', 'start service', { service: slot.spec.name, pid: child.pid ?? null });
    child.once('spawn', () => {
      if (slot.child === child && slot.status.state === 'starting') slot.status.state = 'running';
    });
    child.on('message', (message: unknown) => {
      if (slot.child !== child) return;
      if (!isChildMessage(message)) {
        this.log.event('warn', 'ignore unknown message', { service: slot.spec.name });
        return;
      }
      const m = message;
      if (m.type === 'ready') {
        slot.status.ready = true;
        this.log.event('info', 'service ready', { service: slot.spec.name });
      } else {
        if (slot.status.healthy !== m.healthy || slot.status.detail !== (m.detail ?? null))
          this.log.event('info', 'service health', {
            service: slot.spec.name,
            healthy: m.healthy,
            detail: m.detail ?? null,
          });
        slot.status.healthy = m.healthy;
        // A healthy process may still say something worth knowing (no kubelet: no endpoints).
        slot.status.detail = m.detail ?? null;
      }
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      readline
        .createInterface({ input: stream })
        .on('line', (line) => this.forward(slot.spec.name, line));
    }
    child.once('error', (err) =>
      this.log.event('error', 'service error', { service: slot.spec.name, error: err.message }),
    );
    child.once('exit', (code, signal) => {
      if (slot.child !== child) return;
      slot.child = undefined;
      slot.status.pid = null;
      slot.status.ready = false;
      slot.status.lastExit = signal ? `signal ${signal}` : `code ${code ?? 'unknown'}`;
      if (this.stopping) {
        slot.status.state = 'stopped';
        return;
      }
      this.scheduleRestart(slot, slot.status.lastExit);
    });
  }

  private scheduleRestart(slot: Slot, why: string): void {
    if (Date.now() - slot.startedAt >= this.backoff.resetAfterMs)
      slot.delayMs = this.backoff.initialMs;
    const delay = Math.round(slot.delayMs * (0.8 + Math.random() * 0.4));
    slot.delayMs = Math.min(this.backoff.maxMs, slot.delayMs * 2);
    slot.status.state = 'backoff';
    slot.status.restarts++;
    this.log.event('warn', 'service exited; restarting', {
      service: slot.spec.name,
      exit: why,
      delayMs: delay,
      restarts: slot.status.restarts,
    });
    slot.timer = setTimeout(() => this.spawn(slot), delay);
  }

  private async stopOne(slot: Slot): Promise<void> {
    const child = slot.child;
    if (!child || child.exitCode !== null) {
      slot.status.state = 'stopped';
      return;
    }
    slot.status.state = 'stopping';
    this.log.event('info', 'stop service', { service: slot.spec.name });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const stop: SupervisorMessage = { type: 'stop' };
    // A channel that closed meanwhile: the child exits on its own, SIGTERM only makes sure.
    if (child.connected) child.send(stop, (err) => err && child.kill('SIGTERM'));
    else child.kill('SIGTERM');
    const timer = setTimeout(() => {
      this.log.event('warn', 'service did not stop; killing', { service: slot.spec.name });
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    slot.status.state = 'stopped';
    this.log.event('info', 'service stopped', {
      service: slot.spec.name,
      exit: slot.status.lastExit,
    });
  }

  private forward(service: string, line: string): void {
    // Children log JSON lines already; anything else is wrapped so the stream stays JSON.
    if (line.startsWith('{') && line.endsWith('}')) this.log.raw(line);
    else if (line.trim() !== '') this.log.event('info', 'output', { service, line });
  }
}
