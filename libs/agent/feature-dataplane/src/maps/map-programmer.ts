import { snapshot } from '@podmin/agent-contracts';
import { DataplaneError } from '../dataplane-error';
import {
  IPPROTO,
  MAP_CAPACITY,
  backendKey,
  backendValue,
  serviceKey,
  serviceValue,
  vipValue,
} from './layout';

/** One map as the programmer writes it (BpfMap satisfies it; tests use an in-memory one). */
export interface WritableMap {
  update(key: Buffer, value: Buffer): void;
  delete(key: Buffer): boolean;
}

/** The three maps a snapshot programs. */
export interface ServiceMaps {
  vips: WritableMap;
  services: WritableMap;
  backends: WritableMap;
}

/** What one `program` call changed, and what the maps hold after it. */
export interface ProgramResult {
  updated: number;
  deleted: number;
  vips: number;
  serviceKeys: number;
  backends: number;
}

type Entries = Map<string, Buffer>;

interface Desired {
  vips: Entries;
  services: Entries;
  backends: Entries;
}

const PROTOCOLS: Partial<Record<snapshot.SnapshotPort_Protocol, number>> = {
  [snapshot.SnapshotPort_Protocol.TCP]: IPPROTO.TCP,
  [snapshot.SnapshotPort_Protocol.UDP]: IPPROTO.UDP,
};

/**
 * Programs the Service maps from snapshots by difference: it remembers what it wrote and, for
 * each new snapshot, writes only entries that are new or changed and deletes only those that
 * went away. Writes are ordered so the program never sees a Service key whose backend slots
 * are missing: new backends first, then Service keys, then VIPs; deletions in the reverse
 * order. Each (VIP, port, protocol) keeps its numeric ID across snapshots, so a backend change
 * touches only that Service's slots.
 */
export class MapProgrammer {
  private current: Desired = { vips: new Map(), services: new Map(), backends: new Map() };
  private readonly ids = new Map<string, number>();
  private readonly freeIds: number[] = [];
  private nextId = 1;

  constructor(private readonly maps: ServiceMaps) {}

  /** Brings the maps to `services`; throws before writing anything when a bound is exceeded. */
  program(services: readonly snapshot.SnapshotService[]): ProgramResult {
    const desired = this.desired(services);
    const over = (
      [
        ['VIPs', desired.vips.size, MAP_CAPACITY.vips],
        ['Service keys', desired.services.size, MAP_CAPACITY.services],
        ['backend entries', desired.backends.size, MAP_CAPACITY.backends],
      ] as const
    ).find(([, n, max]) => n > max);
    if (over) {
      this.releaseUnused(this.current);
      throw new DataplaneError(
        'OBJECT_TOO_LARGE',
        `the snapshot needs ${over[1]} ${over[0]}; the dataplane holds at most ${over[2]}`,
      );
    }
    let updated = 0;
    let deleted = 0;
    const upsert = (map: WritableMap, was: Entries, now: Entries): void => {
      for (const [key, value] of now) {
        const old = was.get(key);
        if (old && old.equals(value)) continue;
        map.update(Buffer.from(key, 'hex'), value);
        updated++;
      }
    };
    const remove = (map: WritableMap, was: Entries, now: Entries): void => {
      for (const key of was.keys()) {
        if (now.has(key)) continue;
        map.delete(Buffer.from(key, 'hex'));
        deleted++;
      }
    };
    const was = this.current;
    upsert(this.maps.backends, was.backends, desired.backends);
    upsert(this.maps.services, was.services, desired.services);
    upsert(this.maps.vips, was.vips, desired.vips);
    remove(this.maps.vips, was.vips, desired.vips);
    remove(this.maps.services, was.services, desired.services);
    remove(this.maps.backends, was.backends, desired.backends);
    this.current = desired;
    this.releaseUnused(desired);
    return {
      updated,
      deleted,
      vips: desired.vips.size,
      serviceKeys: desired.services.size,
      backends: desired.backends.size,
    };
  }

  /** Forgets what was written (the maps were recreated empty). */
  reset(): void {
    this.current = { vips: new Map(), services: new Map(), backends: new Map() };
    this.ids.clear();
    this.freeIds.length = 0;
    this.nextId = 1;
  }

  private desired(services: readonly snapshot.SnapshotService[]): Desired {
    const out: Desired = { vips: new Map(), services: new Map(), backends: new Map() };
    for (const service of services) {
      let ports = 0;
      for (const port of service.ports) {
        const proto = PROTOCOLS[port.protocol];
        if (proto === undefined) continue;
        const key = serviceKey(service.vip, port.port, proto).toString('hex');
        const id = this.idOf(key);
        const backends = [...new Set(service.backends.map((b) => b.address))].sort();
        out.services.set(key, serviceValue(id, backends.length));
        backends.forEach((address, slot) => {
          out.backends.set(
            backendKey(id, slot).toString('hex'),
            backendValue(address, port.targetPort),
          );
        });
        ports++;
      }
      if (ports > 0) {
        const vip = serviceKey(service.vip, 0, 0).subarray(0, 16).toString('hex');
        out.vips.set(vip, vipValue(ports));
      }
    }
    return out;
  }

  private idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.nextId++;
      this.ids.set(key, id);
    }
    return id;
  }

  // IDs of Service keys no longer present go back to the pool once nothing refers to them.
  private releaseUnused(kept: Desired): void {
    for (const [key, id] of this.ids) {
      if (kept.services.has(key)) continue;
      this.ids.delete(key);
      this.freeIds.push(id);
    }
  }
}
