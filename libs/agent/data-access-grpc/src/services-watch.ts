import type { coordinator } from '@podmin/agent-contracts';
import {
  WATCH_SERVICES_DEADLINE_MARGIN_MS,
  WATCH_SERVICES_RETRY,
  WATCH_SERVICES_WAIT_MS,
} from '@podmin/agent-util-config';
import { FaultBackoff } from '@podmin/agent-util-faults';

/**
 * The coordinator's long poll as its watchers use it (the coordinator client satisfies it):
 * answers at once when the view differs from `knownRevision`, else on change or after `waitMs`.
 */
export interface ServicesWatch {
  watchServices(
    request: coordinator.WatchServicesRequest,
    options: { timeoutMs: number },
  ): Promise<coordinator.ServicesView>;
}

/** Timings of a {@link ServicesWatchLoop}; the defaults are the agent's constants (tests shorten them). */
export interface ServicesWatchTiming {
  /** How long the coordinator may hold one poll (`WATCH_SERVICES_WAIT_MS`). */
  waitMs?: number;
  /** Added to `waitMs` for the call's deadline (`WATCH_SERVICES_DEADLINE_MARGIN_MS`). */
  deadlineMarginMs?: number;
  /** First retry delay after a failed poll, doubled per failure up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  /** Longest retry delay. */
  maxBackoffMs?: number;
  /** Random source of the retry jitter in [0, 1) (default Math.random). */
  random?: () => number;
}

/** What a {@link ServicesWatchLoop} follows and whom it tells. */
export interface ServicesWatchHandlers {
  /** Backends too (agent-dataplane), or only Service identities (agent-dns). */
  identitiesOnly: boolean;
  /** The revision the watcher holds ('' before the first snapshot). */
  knownRevision(): string;
  /** Every answer while the loop runs, changed or not; the next poll waits for it. */
  onView(view: coordinator.ServicesView): void | Promise<void>;
  /** The first failure of an outage (later failures of the same outage are not reported). */
  onUnreachable(error: unknown): void;
  /** The first answer after an outage, with how long the outage lasted. */
  onReachable(outageMs: number): void;
}

/**
 * The one WatchServices client of the agent (agent-dns and agent-dataplane): long-polls the
 * local coordinator from {@link start} until {@link stop}, hands every answer to `onView`, and
 * while the coordinator is unreachable retries with the agent's one retry policy (FaultBackoff:
 * doubling, jittered, capped), telling the watcher once when an outage starts and once when it
 * ends. It never ends on its own.
 */
export class ServicesWatchLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly waitMs: number;
  private readonly marginMs: number;
  private readonly backoff: FaultBackoff;

  constructor(
    private readonly watch: ServicesWatch,
    private readonly handlers: ServicesWatchHandlers,
    timing: ServicesWatchTiming = {},
  ) {
    this.waitMs = timing.waitMs ?? WATCH_SERVICES_WAIT_MS;
    this.marginMs = timing.deadlineMarginMs ?? WATCH_SERVICES_DEADLINE_MARGIN_MS;
    const initialMs = timing.initialBackoffMs ?? WATCH_SERVICES_RETRY.initialMs;
    this.backoff = new FaultBackoff({
      pollMs: Math.max(initialMs, timing.maxBackoffMs ?? WATCH_SERVICES_RETRY.maxMs),
      initialMs,
      ...(timing.random === undefined ? {} : { random: timing.random }),
    });
  }

  /** Whether the loop runs (between {@link start} and {@link stop}). */
  get active(): boolean {
    return this.running;
  }

  /** Starts polling (once; a running loop is left alone). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops polling: a retry wait ends now, a poll in flight is answered to no one. */
  stop(): void {
    this.running = false;
    this.wake?.();
  }

  /** Resolves when the loop has ended after {@link stop}. */
  async stopped(): Promise<void> {
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let view: coordinator.ServicesView;
      try {
        view = await this.watch.watchServices(
          {
            knownRevision: this.handlers.knownRevision(),
            waitMs: this.waitMs,
            identitiesOnly: this.handlers.identitiesOnly,
          },
          { timeoutMs: this.waitMs + this.marginMs },
        );
      } catch (err) {
        if (!this.running) break;
        const first = !this.backoff.failing;
        const delayMs = this.backoff.failed(Date.now());
        if (first) this.handlers.onUnreachable(err);
        if (!this.running) break;
        await this.sleep(delayMs);
        continue;
      }
      const outageSince = this.backoff.failingSinceMs;
      this.backoff.succeeded();
      if (outageSince !== undefined) this.handlers.onReachable(Date.now() - outageSince);
      if (!this.running) break;
      await this.handlers.onView(view);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
