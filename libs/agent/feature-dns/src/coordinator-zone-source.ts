import { coordinator } from '@podmin/agent-contracts';
import { ServicesWatchLoop } from '@podmin/agent-data-access-grpc';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { DnsZone } from './dns-zone';
import type { ZoneService } from './dns-zone-types';
import type { ServicesWatch, ZoneSource } from './dns.ports';

/** Settings of the long poll; the defaults suit a real node. */
export interface CoordinatorZoneSourceOptions {
  /** The cluster whose VIPs the zones serve. */
  cluster: string;
  logger: StructuredLogger;
  /** How long the coordinator may hold one poll (default `WATCH_SERVICES_WAIT_MS`, 25 s). */
  waitMs?: number;
  /** Added to `waitMs` for the call's deadline (default 5 s). */
  deadlineMarginMs?: number;
  /** First retry delay after a failed poll, doubled per failure up to `maxBackoffMs` (250 ms). */
  initialBackoffMs?: number;
  /** Longest retry delay (default 5 s; `WATCH_SERVICES_RETRY`). */
  maxBackoffMs?: number;
  /** Called whenever what `status()` reports changes (for the process's health). */
  onChange?: (status: CoordinatorZoneStatus) => void;
}

/** What the source holds now. */
export interface CoordinatorZoneStatus {
  zone: DnsZone;
  /** Revision of the snapshot the zone was built from; '' before the first. */
  revision: string;
  /** Where the last view came from, as the coordinator said. */
  source: coordinator.ServicesView_Source;
  /** Whether the last poll failed (the zone is then the last one received). */
  unreachable: boolean;
  /** Why the zone could not follow the last snapshot, if it could not. */
  problem: string | undefined;
}

const SOURCE_UNSPECIFIED = coordinator.ServicesView_Source.SOURCE_UNSPECIFIED;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Namespace/name pairs in one string: equal keys mean an equal zone. */
function identityKey(services: readonly ZoneService[]): string {
  return services.map((s) => `${s.namespace}/${s.name}`).join('\n');
}

/**
 * The ZoneSource of agent-dns: long-polls the local coordinator's WatchServices and builds a
 * zone from the Service identities (namespace, name) of each new snapshot; backends never
 * change DNS, so a snapshot with the same identities keeps the zone (and its memoized replies).
 * Until the first snapshot the zone is empty (every name NXDOMAIN, negative TTL 5 s). While
 * the coordinator is unreachable it keeps the last zone and retries with bounded backoff,
 * logging once per outage; the loop runs from the first `subscribe` until the last
 * unsubscribe and never ends on its own.
 */
export class CoordinatorZoneSource implements ZoneSource {
  private readonly listeners = new Set<(zone: DnsZone) => void>();
  private state: CoordinatorZoneStatus;
  private identities = '';
  private readonly loop: ServicesWatchLoop;

  constructor(
    watch: ServicesWatch,
    private readonly options: CoordinatorZoneSourceOptions,
  ) {
    this.loop = new ServicesWatchLoop(
      watch,
      {
        // Identities only: readiness changes (backends) never reach or wake the DNS process.
        identitiesOnly: true,
        knownRevision: () => this.state.revision,
        onView: (view) => {
          if (!view.unchanged) this.apply(view);
        },
        onUnreachable: (err) => {
          options.logger.event('warn', 'coordinator unreachable; answering from the last zone', {
            error: messageOf(err),
            revision: this.state.revision,
            services: this.state.zone.size,
          });
          this.update({ unreachable: true });
        },
        onReachable: (outageMs) => {
          options.logger.event('info', 'coordinator reachable again', { outageMs });
          this.update({ unreachable: false });
        },
      },
      {
        waitMs: options.waitMs,
        deadlineMarginMs: options.deadlineMarginMs,
        initialBackoffMs: options.initialBackoffMs,
        maxBackoffMs: options.maxBackoffMs,
      },
    );
    this.state = {
      zone: DnsZone.build({ cluster: options.cluster, generation: 0, services: [] }),
      revision: '',
      source: SOURCE_UNSPECIFIED,
      unreachable: false,
      problem: undefined,
    };
  }

  /** The current zone and where it came from. */
  status(): CoordinatorZoneStatus {
    return this.state;
  }

  /** Calls `listener` with the current zone now and with every new one; starts the poll loop. */
  subscribe(listener: (zone: DnsZone) => void): () => void {
    this.listeners.add(listener);
    listener(this.state.zone);
    this.loop.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.loop.stop();
    };
  }

  /** Resolves when the loop has ended after the last unsubscribe (tests). */
  async stopped(): Promise<void> {
    await this.loop.stopped();
  }

  /** Follows one view: a new zone when its identities differ, else only the revision. */
  private apply(view: coordinator.ServicesView): void {
    const snapshot = view.snapshot;
    if (snapshot === undefined) {
      if (view.source !== this.state.source) this.update({ source: view.source });
      return;
    }
    const services = snapshot.services.map((s) => ({ namespace: s.namespace, name: s.name }));
    const key = identityKey(services);
    if (key === this.identities && this.state.revision !== '') {
      this.update({ revision: snapshot.revision, source: view.source, problem: undefined });
      return;
    }
    let zone: DnsZone;
    try {
      zone = DnsZone.build(
        { cluster: this.options.cluster, generation: Number(snapshot.generation), services },
        this.state.zone,
      );
    } catch (err) {
      // A snapshot the zone refuses stays refused: keep the last zone and say why.
      const problem = `snapshot ${snapshot.revision} not served: ${messageOf(err)}`;
      this.options.logger.event('error', 'build Service DNS zone', { error: problem });
      this.update({ revision: snapshot.revision, source: view.source, problem });
      return;
    }
    const mismatched = snapshot.services.filter(
      (s) => s.vip !== '' && zone.vipOf(s.namespace, s.name) !== s.vip,
    );
    if (mismatched.length > 0) {
      // Both sides use serviceVip: a difference means another cluster name. DNS serves its own.
      this.options.logger.event('warn', 'snapshot VIPs differ from this cluster’s', {
        cluster: this.options.cluster,
        services: mismatched.length,
        first: `${mismatched[0]?.namespace}/${mismatched[0]?.name}`,
      });
    }
    this.identities = key;
    this.options.logger.event('info', 'serve Service DNS zone', {
      revision: snapshot.revision,
      generation: zone.generation,
      services: zone.size,
    });
    this.update({ zone, revision: snapshot.revision, source: view.source, problem: undefined });
    for (const listener of this.listeners) listener(zone);
  }

  private update(change: Partial<CoordinatorZoneStatus>): void {
    this.state = { ...this.state, ...change };
    this.options.onChange?.(this.state);
  }
}
