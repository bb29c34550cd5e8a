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

/** The coordinator's long poll as agent-dns uses it: the agent's one WatchServices client's port. */
export type { ServicesWatch } from '@podmin/agent-data-access-grpc';
