import type { ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { isChildMessage, type SupervisorMessage } from '@podmin/agent-contracts';
import { SERVICE_STOP_GRACE_MS } from '@podmin/agent-util-config';
import type { JsonLogger } from '@podmin/agent-util-logging';
import { forkLauncher, slicedThreadsOf, type Launcher } from './launcher';

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
        // The launcher asked for the slice again at this first message, so the count is final.
        const sliced = slicedThreadsOf(child);
        this.log.event('info', 'service ready', {
          service: slot.spec.name,
          ...(sliced === undefined ? {} : { sliceNs: slot.spec.sliceNs, slicedThreads: sliced }),
        });
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
