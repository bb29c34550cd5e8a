import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PROCESS_LIFECYCLE, type ProcessLifecycle } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { nodePaths } from './node-paths';
import { runReconcileLoop, DEFAULT_TIMING, type LoopTiming } from './reconcile-loop';
import { StaticPodReconciler, type RolloutCoordination } from './reconciler';
import { ReceiptWriter, type KubeletView } from './receipts/receipt-writer';
import {
  DESIRED_STATE_READER,
  IDENTITY_ISSUER,
  SECRET_SOURCE,
  TRUST_LIST_READER,
  type DesiredService,
  type DesiredStateReader,
  type IdentityIssuer,
  type SecretSource,
  type ServiceSink,
  type TrustListReader,
} from './staticpod.ports';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import { sleep } from './abortable-sleep';

/** Token of the process configuration. */
export const STATICPOD_CONFIG = Symbol('STATICPOD_CONFIG');
/** Token of the structured logger. */
export const STATICPOD_LOGGER = Symbol('STATICPOD_LOGGER');
/** Token of optional reconcile-loop timing overrides (pass deadline, poll interval). */
export const STATICPOD_TIMING = Symbol('STATICPOD_TIMING');
/** Token of the rollout ports (absent: a new revision replaces the Pod at once, as without kubelet). */
export const STATICPOD_ROLLOUTS = Symbol('STATICPOD_ROLLOUTS');

/** What gated rollouts need: kubelet's Pods and the node's coordinator. */
export interface RolloutPorts {
  kubelet: KubeletView;
  coordination: RolloutCoordination;
}

/** Token of the node's receipt writer (absent: no receipts, e.g. in tests of the loop alone). */
export const STATICPOD_RECEIPTS = Symbol('STATICPOD_RECEIPTS');

const SHUTDOWN_GRACE_MS = 10_000;

/** Runs the reconcile loop for the process's lifetime. */
@Injectable()
export class StaticPodService
  implements OnApplicationBootstrap, OnApplicationShutdown, ServiceSink
{
  readonly reconciler: StaticPodReconciler;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private receiptLoop: Promise<void> | undefined;
  /** Passes finished (either way): no receipt is written before the first one. */
  private passes = 0;

  constructor(
    @Inject(STATICPOD_CONFIG) private readonly config: AgentProcessConfig,
    @Inject(STATICPOD_LOGGER) private readonly log: StructuredLogger,
    @Inject(DESIRED_STATE_READER) store: DesiredStateReader,
    @Inject(SECRET_SOURCE) secrets: SecretSource,
    @Inject(IDENTITY_ISSUER) identity: IdentityIssuer,
    @Inject(PROCESS_LIFECYCLE) private readonly lifecycle: ProcessLifecycle,
    @Optional() @Inject(STATICPOD_TIMING) private readonly timing?: Partial<LoopTiming>,
    @Optional() @Inject(STATICPOD_RECEIPTS) private readonly receipts?: ReceiptWriter,
    @Optional() @Inject(STATICPOD_ROLLOUTS) rollouts?: RolloutPorts,
    @Optional() @Inject(TRUST_LIST_READER) trustList?: TrustListReader,
  ) {
    this.reconciler = new StaticPodReconciler(
      {
        cluster: config.cluster,
        nodegroup: config.nodegroup,
        nodeAddress: config.nodeAddress,
        paths: nodePaths(config.nodeRoot),
        indexIntervalMs: { ...DEFAULT_TIMING, ...timing }.intervalMs,
      },
      store,
      secrets,
      identity,
      this,
      () => new Date(),
      {
        ...(rollouts === undefined
          ? {}
          : { kubelet: rollouts.kubelet, coordination: rollouts.coordination }),
        ...(trustList === undefined ? {} : { trustList }),
        log: (message, fields) => log.event('warn', message, fields),
      },
    );
  }

  /**
   * ServiceSink: the NodeGroup's verified Services, after the Pod commit (the spec's order). No
   * process consumes them: the leader's coordinator reads every Service payload of the cluster
   * from the index itself (DESIGN.md §6.20), so this only logs the count.
   */
  publish(services: readonly DesiredService[]): Promise<void> {
    this.log.event('info', 'staged services', { count: services.length });
    return Promise.resolve();
  }

  onApplicationBootstrap(): void {
    this.log.event('info', 'start reconcile loop', { nodegroup: this.config.nodegroup });
    const timing = { ...DEFAULT_TIMING, ...this.timing };
    this.loop = runReconcileLoop(this.reconciler, this.abort.signal, timing, (o) => {
      this.passes++;
      if (o.ok && o.warning !== undefined)
        this.log.event('error', 'reconcile', { result: o.detail, warning: o.warning });
      else if (o.ok)
        this.log.event(o.detail === 'unchanged' ? 'debug' : 'info', 'reconcile', {
          result: o.detail,
        });
      // Degraded passes are logged as errors: the node is knowingly not at its desired state.
      else
        this.log.event(o.degraded ? 'error' : 'warn', 'reconcile failed', {
          error: o.error,
          retryInMs: o.retryInMs,
        });
      // Report health to the supervising podmin-agent; its /healthz aggregates it. A node whose
      // index vanished is not healthy even once it has emptied itself without error.
      const missing = this.reconciler.indexMissing();
      if (missing !== undefined) this.lifecycle.reportHealth(false, missing);
      else if (o.ok) this.lifecycle.reportHealth(true);
      else this.lifecycle.reportHealth(false, o.error);
    }).catch((err: unknown) => this.lifecycle.fail('reconcile loop died', err));
    if (this.receipts) this.receiptLoop = this.writeReceipts(this.receipts, this.abort.signal);
  }

  async onApplicationShutdown(): Promise<void> {
    this.abort.abort();
    this.receipts?.close();
    await Promise.race([
      Promise.all([this.loop, this.receiptLoop]),
      new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS)),
    ]);
  }

  /**
   * Looks every `pollMs` whether the receipt is due. A failed write is logged and retried, never
   * fatal: receipts report on the node, they do not run it.
   */
  private async writeReceipts(writer: ReceiptWriter, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(writer.timing.pollMs, signal);
      if (signal.aborted || this.passes === 0) continue;
      try {
        const result = await writer.tick(this.reconciler.applied());
        if (result === 'written')
          this.log.event('debug', 'write receipt', { writes: writer.writes });
      } catch (err) {
        this.log.event('warn', 'write receipt failed', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }
}
