import { Module, type DynamicModule } from '@nestjs/common';
import type { ProcessLifecycle } from '@podmin/agent-contracts';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { formatAddress } from '@podmin/agent-util-config';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { CoordinatorZoneSource, type CoordinatorZoneStatus } from './coordinator-zone-source';
import { DnsGrpcController, ZONE_STATUS } from './dns.grpc-controller';
import { DnsModule } from './dns.module';
import type { DnsServerOptions } from './dns-server-options';
import type { ServicesWatch } from './dns.ports';

// The gRPC controller lives in its own module; exported here too, as before.
export { DnsGrpcController } from './dns.grpc-controller';

/** Everything the agent-dns module is built from. */
export interface DnsProcessDeps {
  cluster: string;
  /** Where to answer (UDP and TCP); port 0 picks a free one. */
  listen: { host: string; port: number };
  /** The local coordinator's long poll. */
  watch: ServicesWatch;
  logger: StructuredLogger;
  lifecycle: ProcessLifecycle;
  /** Long-poll settings (tests shorten them). */
  poll?: { waitMs?: number; initialBackoffMs?: number; maxBackoffMs?: number };
  /** Other listener settings. */
  server?: Omit<DnsServerOptions, 'host' | 'port'>;
}

/** The health one zone status means: unhealthy, with why, until DNS follows a snapshot. */
export function dnsHealth(status: CoordinatorZoneStatus): { healthy: boolean; detail?: string } {
  const serving =
    status.revision === ''
      ? 'no Service snapshot yet, so svc.cluster.local is empty (every name NXDOMAIN)'
      : `answering from snapshot ${status.revision} (${status.zone.size} Services)`;
  if (status.unreachable) return { healthy: false, detail: `coordinator unreachable; ${serving}` };
  if (status.problem !== undefined) return { healthy: false, detail: status.problem };
  if (status.revision === '') return { healthy: false, detail: serving };
  return { healthy: true };
}

/** The agent-dns Nest module: the DNS listeners fed by the coordinator, and the Dns contract. */
@Module({})
export class DnsProcessModule {
  /** Module wired with the process's dependencies. */
  static register(deps: DnsProcessDeps): DynamicModule {
    let reported: string | undefined;
    // Only changes are sent: the supervisor logs each one.
    const report = (status: CoordinatorZoneStatus): void => {
      const health = dnsHealth(status);
      const key = JSON.stringify(health);
      if (key === reported) return;
      reported = key;
      deps.lifecycle.reportHealth(health.healthy, health.detail);
    };
    const source = new CoordinatorZoneSource(deps.watch, {
      cluster: deps.cluster,
      logger: deps.logger,
      ...deps.poll,
      onChange: report,
    });
    report(source.status());
    return {
      module: DnsProcessModule,
      imports: [
        DnsModule.register({
          server: { ...deps.server, host: deps.listen.host, port: deps.listen.port },
          zoneSource: { useValue: source },
          onListening: (server) => {
            const { path, reason } = server.udpPath();
            deps.logger.event(path === 'dgram' ? 'warn' : 'info', 'serve Service DNS over UDP', {
              path,
              ...(reason === undefined ? {} : { reason }),
            });
          },
        }),
      ],
      controllers: [DnsGrpcController],
      providers: [{ provide: ZONE_STATUS, useValue: source }],
    };
  }
}

/**
 * The agent-dns process: authoritative `svc.cluster.local` on `PODMIN_AGENT_DNS_LISTEN` (UDP
 * and TCP), zones from the local coordinator's WatchServices, the Dns contract on its socket.
 */
export const dnsProcess: AgentProcessDefinition = {
  service: 'dns',
  module: ({ config, logger, lifecycle, client }) => {
    const deps: DnsProcessDeps = {
      cluster: config.cluster,
      listen: config.dnsListen,
      watch: client('coordinator'),
      logger,
      lifecycle,
    };
    logger.event('info', 'answer Service DNS', { listen: formatAddress(config.dnsListen) });
    return Promise.resolve(DnsProcessModule.register(deps));
  },
};
