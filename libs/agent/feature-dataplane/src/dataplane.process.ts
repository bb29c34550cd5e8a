import fs from 'node:fs';
import path from 'node:path';
import {
  Controller,
  Inject,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { dataplane, type coordinator, type ProcessLifecycle } from '@podmin/agent-contracts';
import { agentProviderOf } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { Dataplane, type DataplaneOptions } from './dataplane';
import {
  IprouteInterfaces,
  type DataplaneInterface,
  type InterfaceRole,
  type InterfaceSource,
} from './interfaces/interfaces';

/** The coordinator's long poll as agent-dataplane uses it (the coordinator client satisfies it). */
export interface SnapshotWatch {
  watchServices(
    request: coordinator.WatchServicesRequest,
    options: { timeoutMs: number },
  ): Promise<coordinator.ServicesView>;
}

/** Everything the agent-dataplane module is built from. */
export interface DataplaneProcessDeps {
  dataplane: Dataplane;
  watch: SnapshotWatch;
  logger: StructuredLogger;
  lifecycle: ProcessLifecycle;
  /** Why this node forwards no VIPs at all, when it has no Pod network (local, no node stack). */
  noPodNetwork?: string;
  /** Interface re-check period (default 10 s) and long-poll settings (tests shorten them). */
  timing?: { refreshMs?: number; waitMs?: number; backoffMs?: number };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const DEPS = Symbol('DATAPLANE_PROCESS_DEPS');

/**
 * Follows the coordinator's full view (backends included: every readiness change is also a
 * hint that Pod veths may have come or gone), applies each snapshot to the dataplane, re-checks
 * interfaces periodically, reports health on change, and detaches at shutdown, which the
 * supervisor orders last.
 */
class DataplaneRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private running = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private revision = '';
  private unreachable = false;
  private reported = '';

  constructor(@Inject(DEPS) private readonly deps: DataplaneProcessDeps) {}

  onApplicationBootstrap(): void {
    this.report();
    if (this.deps.noPodNetwork !== undefined) {
      this.deps.logger.event('info', 'forward no Service VIPs', { reason: this.deps.noPodNetwork });
      return;
    }
    this.running = true;
    this.loop = this.run();
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
    this.wake?.();
    void this.loop;
    this.deps.dataplane.close();
  }

  private async run(): Promise<void> {
    const waitMs = this.deps.timing?.waitMs ?? 25_000;
    const backoffMs = this.deps.timing?.backoffMs ?? 1_000;
    while (this.running) {
      let view: coordinator.ServicesView;
      try {
        view = await this.deps.watch.watchServices(
          { knownRevision: this.revision, waitMs, identitiesOnly: false },
          { timeoutMs: waitMs + 5_000 },
        );
      } catch (err) {
        if (!this.running) break;
        if (!this.unreachable) {
          this.unreachable = true;
          this.deps.logger.event('warn', 'coordinator unreachable; keeping the programmed maps', {
            error: messageOf(err),
          });
          this.report();
        }
        await this.sleep(backoffMs);
        continue;
      }
      if (this.unreachable) {
        this.unreachable = false;
        this.deps.logger.event('info', 'coordinator reachable again', {});
      }
      if (!this.running) break;
      if (!view.unchanged && view.snapshot) {
        this.revision = view.snapshot.revision;
        await this.deps.dataplane.apply(view.snapshot);
      } else {
        await this.deps.dataplane.refresh();
      }
      this.report();
    }
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

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** gRPC controller of the Dataplane contract. */
@Controller()
@dataplane.DataplaneControllerMethods()
export class DataplaneGrpcController implements dataplane.DataplaneController {
  constructor(@Inject(DEPS) private readonly deps: DataplaneProcessDeps) {}

  getStatus(): dataplane.DataplaneStatus {
    const s = this.deps.dataplane.status();
    const c = this.deps.dataplane.counters();
    return {
      attached: s.attached,
      interfaces: s.interfaces,
      snapshotRevision: s.revision,
      vips: s.vips,
      serviceKeys: s.serviceKeys,
      backends: s.backends,
      problem: s.problem ?? this.deps.noPodNetwork ?? '',
      forwarded: c.forward,
      reversed: c.reverse,
      newFlows: c.newFlow,
      rejected: c.reject,
      droppedUnparsed: c.dropUnparsed,
      snatExhausted: c.snatExhausted,
    };
  }
}

/** The agent-dataplane Nest module: the runner and the Dataplane contract. */
@Module({})
export class DataplaneProcessModule {
  /** Module wired with the process's dependencies. */
  static register(deps: DataplaneProcessDeps): DynamicModule {
    return {
      module: DataplaneProcessModule,
      controllers: [DataplaneGrpcController],
      providers: [{ provide: DEPS, useValue: deps }, DataplaneRunner],
    };
  }
}

/** An interface source keeping only interfaces with one of `roles`. */
export function onlyRoles(
  source: InterfaceSource,
  roles: readonly InterfaceRole[],
): InterfaceSource {
  return {
    list: async (): Promise<DataplaneInterface[]> =>
      (await source.list()).filter((i) => i.roles.some((r) => roles.includes(r))),
  };
}

/**
 * The committed object: `bpf/service_lb.o` beside the bundled program (tools/scripts/bundle.mjs
 * copies it), else the workspace's `bpf/obj/service_lb.o`.
 */
export function dataplaneObjectPath(): string {
  const candidates = [
    path.join(path.dirname(process.argv[1] ?? ''), 'bpf', 'service_lb.o'),
    path.join(__dirname, 'bpf', 'service_lb.o'),
    path.resolve(__dirname, '../../../../bpf/obj/service_lb.o'),
  ];
  return candidates.find((file) => fs.existsSync(file)) ?? (candidates[0] as string);
}

/**
 * The agent-dataplane process: the eBPF VIP dataplane fed by the local coordinator, the
 * Dataplane contract on its socket. On the local provider without a node stack (node address
 * `::1`) there is no Pod network, so it forwards nothing and says so; locally it attaches to Pod
 * veths only, leaving the host's own interfaces alone (there is no other node to reach).
 */
export const dataplaneProcess: AgentProcessDefinition = {
  service: 'dataplane',
  module: ({ config, logger, lifecycle, client }) => {
    const iproute = new IprouteInterfaces(config.ipv6Prefix);
    const options: DataplaneOptions = {
      objectPath: dataplaneObjectPath(),
      nodeAddress: config.nodeAddress,
      interfaces: agentProviderOf(config).dataplaneOnHostInterfaces
        ? iproute
        : onlyRoles(iproute, ['pod-veth']),
      logger,
    };
    const deps: DataplaneProcessDeps = {
      dataplane: new Dataplane(options),
      watch: client('coordinator'),
      logger,
      lifecycle,
      ...(config.nodeAddress === '::1'
        ? { noPodNetwork: 'this node has no Pod network (node address ::1)' }
        : {}),
    };
    return Promise.resolve(DataplaneProcessModule.register(deps));
  },
};
