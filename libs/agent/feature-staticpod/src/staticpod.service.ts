import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PROCESS_LIFECYCLE, type ProcessLifecycle } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { stringifyCanonical } from '@podmin/util-manifest';
import { nodePaths } from './node-paths';
import { runReconcileLoop, DEFAULT_TIMING, type LoopTiming } from './reconcile-loop';
import { StaticPodReconciler } from './reconciler';
import {
  DESIRED_STATE_READER,
  IDENTITY_ISSUER,
  SECRET_SOURCE,
  type DesiredService,
  type DesiredStateReader,
  type IdentityIssuer,
  type SecretSource,
  type ServiceSink,
} from './staticpod.ports';
import type { AgentProcessConfig } from '@podmin/agent-util-config';

/** Token of the process configuration. */
export const STATICPOD_CONFIG = Symbol('STATICPOD_CONFIG');
/** Token of the structured logger. */
export const STATICPOD_LOGGER = Symbol('STATICPOD_LOGGER');
/** Token of optional reconcile-loop timing overrides (pass deadline, poll interval). */
export const STATICPOD_TIMING = Symbol('STATICPOD_TIMING');

const SHUTDOWN_GRACE_MS = 10_000;

/** Runs the reconcile loop for the process's lifetime and keeps the handed-on Service state. */
@Injectable()
export class StaticPodService
  implements OnApplicationBootstrap, OnApplicationShutdown, ServiceSink
{
  readonly reconciler: StaticPodReconciler;
  private services: { services: DesiredService[]; indexEtag: string } = {
    services: [],
    indexEtag: '',
  };
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    @Inject(STATICPOD_CONFIG) private readonly config: AgentProcessConfig,
    @Inject(STATICPOD_LOGGER) private readonly log: StructuredLogger,
    @Inject(DESIRED_STATE_READER) store: DesiredStateReader,
    @Inject(SECRET_SOURCE) secrets: SecretSource,
    @Inject(IDENTITY_ISSUER) identity: IdentityIssuer,
    @Inject(PROCESS_LIFECYCLE) private readonly lifecycle: ProcessLifecycle,
    @Optional() @Inject(STATICPOD_TIMING) private readonly timing?: Partial<LoopTiming>,
  ) {
    this.reconciler = new StaticPodReconciler(
      {
        cluster: config.cluster,
        nodegroup: config.nodegroup,
        nodeAddress: config.nodeAddress,
        paths: nodePaths(config.nodeRoot),
      },
      store,
      secrets,
      identity,
      this,
    );
  }

  /** ServiceSink: keeps the latest Service desired state for the coordinator. */
  publish(services: readonly DesiredService[]): Promise<void> {
    this.services = {
      services: [...services],
      indexEtag: this.reconciler.status().indexEtag ?? '',
    };
    this.log.event('info', 'hand on services', { count: services.length });
    return Promise.resolve();
  }

  /** The Service desired state as the contract returns it. */
  desiredServices(): {
    services: Array<{ namespace: string; name: string; owner: string; yaml: string }>;
    indexEtag: string;
  } {
    return {
      indexEtag: this.services.indexEtag,
      services: this.services.services.map((s) => ({
        namespace: s.namespace,
        name: s.name,
        owner: s.owner,
        yaml: stringifyCanonical(s.object),
      })),
    };
  }

  onApplicationBootstrap(): void {
    this.log.event('info', 'start reconcile loop', { nodegroup: this.config.nodegroup });
    const timing = { ...DEFAULT_TIMING, ...this.timing };
    this.loop = runReconcileLoop(this.reconciler, this.abort.signal, timing, (o) => {
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
      // Report health to the supervising podmin-agent; its /healthz aggregates it.
      if (o.ok) this.lifecycle.reportHealth(true);
      else this.lifecycle.reportHealth(false, o.error);
    }).catch((err: unknown) => this.lifecycle.fail('reconcile loop died', err));
  }

  async onApplicationShutdown(): Promise<void> {
    this.abort.abort();
    await Promise.race([this.loop, new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS))]);
  }
}
