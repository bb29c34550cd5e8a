import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ProcessLifecycle } from '@podmin/agent-contracts';
import { ServicesWatchLoop, type ServicesWatch } from '@podmin/agent-data-access-grpc';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { Dataplane } from './dataplane';

/** The coordinator's long poll as agent-dataplane uses it: the agent's one WatchServices client's port. */
export type SnapshotWatch = ServicesWatch;

/** Everything the agent-dataplane module is built from. */
export interface DataplaneProcessDeps {
  dataplane: Dataplane;
  watch: SnapshotWatch;
  logger: StructuredLogger;
  lifecycle: ProcessLifecycle;
  /** Why this node forwards no VIPs at all, when it has no Pod network (local, no node stack). */
  noPodNetwork?: string;
  /**
   * Interface re-check period (default 10 s) and long-poll settings (tests shorten them; a
   * `backoffMs` makes every retry wait that long, else the agent's WatchServices retry applies).
   */
  timing?: { refreshMs?: number; waitMs?: number; backoffMs?: number };
}

/** Token of the {@link DataplaneProcessDeps} the dataplane module provides. */
export const DATAPLANE_PROCESS_DEPS = Symbol('DATAPLANE_PROCESS_DEPS');

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Follows the coordinator's full view (backends included: every readiness change is also a
 * hint that Pod veths may have come or gone), applies each snapshot to the dataplane, re-checks
 * interfaces periodically, reports health on change, and detaches at shutdown, which the
 * supervisor orders last.
 */
@Injectable()
export class DataplaneRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private running = false;
  private loop: ServicesWatchLoop | undefined;
  private timer: NodeJS.Timeout | undefined;
  private revision = '';
  private unreachable = false;
  private reported = '';

  constructor(@Inject(DATAPLANE_PROCESS_DEPS) private readonly deps: DataplaneProcessDeps) {}

  onApplicationBootstrap(): void {
    this.report();
    if (this.deps.noPodNetwork !== undefined) {
      this.deps.logger.event('info', 'forward no Service VIPs', { reason: this.deps.noPodNetwork });
      return;
    }
    this.running = true;
    this.loop = this.watchLoop();
    this.loop.start();
    this.timer = setInterval(() => {
      void this.deps.dataplane.refresh().then(() => this.report());
    }, this.deps.timing?.refreshMs ?? 10_000);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    // The loop may be inside a long poll; it ends when the runtime closes its client, and
    // applies nothing after this (running is false), so detaching need not wait for it.
    this.running = false;
    clearInterval(this.timer);
    this.loop?.stop();
    this.deps.dataplane.close();
  }

  private watchLoop(): ServicesWatchLoop {
    const { waitMs, backoffMs } = this.deps.timing ?? {};
    return new ServicesWatchLoop(
      this.deps.watch,
      {
        identitiesOnly: false,
        knownRevision: () => this.revision,
        onView: async (view) => {
          if (!this.running) return;
          if (!view.unchanged && view.snapshot) {
            this.revision = view.snapshot.revision;
            await this.deps.dataplane.apply(view.snapshot);
          } else {
            await this.deps.dataplane.refresh();
          }
          this.report();
        },
        onUnreachable: (err) => {
          this.unreachable = true;
          this.deps.logger.event('warn', 'coordinator unreachable; keeping the programmed maps', {
            error: messageOf(err),
          });
          this.report();
        },
        onReachable: () => {
          this.unreachable = false;
          this.deps.logger.event('info', 'coordinator reachable again', {});
        },
      },
      {
        waitMs,
        ...(backoffMs === undefined
          ? {}
          : { initialBackoffMs: backoffMs, maxBackoffMs: backoffMs }),
      },
    );
  }

  private report(): void {
    const status = this.deps.dataplane.status();
    let health: { healthy: boolean; detail?: string };
    if (this.deps.noPodNetwork !== undefined)
      health = { healthy: true, detail: `no VIP forwarding: ${this.deps.noPodNetwork}` };
    else if (this.unreachable)
      health = { healthy: false, detail: 'coordinator unreachable; maps kept as programmed' };
    else if (status.problem !== undefined) health = { healthy: false, detail: status.problem };
    else if (this.revision === '') health = { healthy: false, detail: 'no Service snapshot yet' };
    else if (status.vips === 0) health = { healthy: true, detail: 'detached: no Services' };
    else if (!status.attached)
      health = { healthy: true, detail: 'maps programmed; no interface to attach to yet' };
    else health = { healthy: true };
    const key = JSON.stringify(health);
    if (key === this.reported) return;
    this.reported = key;
    this.deps.lifecycle.reportHealth(health.healthy, health.detail);
  }
}
