import type { coordinator } from '@podmin/agent-contracts';
import type { DnsZone } from './dns-zone';

/**
 * Where zones come from (the coordinator's snapshot stream, implemented by the later wiring):
 * `subscribe` calls `listener` with the current zone, if there is one, and with every new zone
 * after it; the returned function stops the calls.
 */
export interface ZoneSource {
  subscribe(listener: (zone: DnsZone) => void): () => void;
}

/** Injection token of the ZoneSource port. */
export const ZONE_SOURCE = Symbol('ZONE_SOURCE');

/**
 * The coordinator's long poll as agent-dns uses it (the coordinator client satisfies it):
 * answers at once when the view differs from `knownRevision`, else on change or after `waitMs`.
 */
export interface ServicesWatch {
  watchServices(
    request: coordinator.WatchServicesRequest,
    options: { timeoutMs: number },
  ): Promise<coordinator.ServicesView>;
}
