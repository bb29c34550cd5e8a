import { snapshot } from '@podmin/agent-contracts';
import { DataplaneError } from '../dataplane-error';
import { IPPROTO, MAPS, MAP_CAPACITY, addressBytes } from './layout';

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

/** One map entry: its identity (for diffing), its key bytes and its value bytes. */
interface Entry {
  id: string;
  key: Buffer;
  value: Buffer;
}

/** One Service's entries as last written, kept while the Service is unchanged. */
interface Encoded {
  signature: string;
  vips: Entry[];
  services: Entry[];
  backends: Entry[];
}

type Kind = 'vips' | 'services' | 'backends';
const KINDS: readonly Kind[] = ['vips', 'services', 'backends'];

const PROTOCOLS: Partial<Record<snapshot.SnapshotPort_Protocol, number>> = {
  [snapshot.SnapshotPort_Protocol.TCP]: IPPROTO.TCP,
  [snapshot.SnapshotPort_Protocol.UDP]: IPPROTO.UDP,
};

/**
 * Programs the Service maps from snapshots by difference, Service by Service: an unchanged
 * Service (same VIP, ports and backends) costs one string comparison; a changed one writes only
 * its entries that changed and deletes those that went away; a removed one deletes its own.
 * Writes are ordered so the program never sees a Service key whose backend slots are missing:
 * new backends first, then Service keys, then VIPs; deletions in the reverse order. Each (VIP,
 * port, protocol) keeps its numeric ID across snapshots, so a backend change touches only that
 * Service's slots.
 */
export class MapProgrammer {
  private encoded = new Map<string, Encoded>();
  private readonly counts: Record<Kind, number> = { vips: 0, services: 0, backends: 0 };
  private readonly ids = new Map<string, number>();
  private readonly freeIds: number[] = [];
  private nextId = 1;
  private readonly addresses = new Map<string, Buffer>();

  constructor(private readonly maps: ServiceMaps) {}

  /** Brings the maps to `services`; throws before writing anything when a bound is exceeded. */
  program(services: readonly snapshot.SnapshotService[]): ProgramResult {
    const next = new Map<string, Encoded>();
    const changed: Array<{ was: Encoded | undefined; now: Encoded }> = [];
    const newIds: string[] = [];
    for (const service of services) {
      const name = `${service.namespace}/${service.name}`;
      const signature = signatureOf(service);
      const was = this.encoded.get(name);
      if (was?.signature === signature) {
        next.set(name, was);
        continue;
      }
      const now = this.encode(service, signature, newIds);
      next.set(name, now);
      changed.push({ was, now });
    }
    const removed = [...this.encoded].filter(([name]) => !next.has(name)).map(([, e]) => e);

    const upserts: Record<Kind, Entry[]> = { vips: [], services: [], backends: [] };
    const deletes: Record<Kind, Entry[]> = { vips: [], services: [], backends: [] };
    const counts = { ...this.counts };
    for (const { was, now } of changed) {
      if (!was) {
        for (const kind of KINDS) {
          upserts[kind].push(...now[kind]);
          counts[kind] += now[kind].length;
        }
        continue;
      }
      for (const kind of KINDS) {
        const old = new Map(was[kind].map((e) => [e.id, e]));
        for (const entry of now[kind]) {
          const before = old.get(entry.id);
          old.delete(entry.id);
          if (before && before.value.equals(entry.value)) continue;
          upserts[kind].push(entry);
          if (!before) counts[kind]++;
        }
        for (const gone of old.values()) {
          deletes[kind].push(gone);
          counts[kind]--;
        }
      }
    }
    for (const gone of removed)
      for (const kind of KINDS) {
        deletes[kind].push(...gone[kind]);
        counts[kind] -= gone[kind].length;
      }
    const over = (
      [
        ['VIPs', counts.vips, MAP_CAPACITY.vips],
        ['Service keys', counts.services, MAP_CAPACITY.services],
        ['backend entries', counts.backends, MAP_CAPACITY.backends],
      ] as const
    ).find(([, n, max]) => n > max);
    if (over) {
      for (const id of newIds) this.releaseId(id);
      throw new DataplaneError(
        'OBJECT_TOO_LARGE',
        `the snapshot needs ${over[1]} ${over[0]}; the dataplane holds at most ${over[2]}`,
      );
    }
    let updated = 0;
    let deleted = 0;
    for (const kind of ['backends', 'services', 'vips'] as const)
      for (const entry of upserts[kind]) {
        this.maps[kind].update(entry.key, entry.value);
        updated++;
      }
    for (const kind of KINDS) {
      // A key another Service took over in this pass (never expected: VIPs come from names).
      const kept = new Set(upserts[kind].map((e) => e.id));
      for (const entry of deletes[kind]) {
        if (kept.has(entry.id)) continue;
        this.maps[kind].delete(entry.key);
        deleted++;
      }
    }
    Object.assign(this.counts, counts);
    // Service-key IDs no Service holds any more go back to the pool.
    const dropped = [...removed, ...changed.flatMap((c) => (c.was ? [c.was] : []))];
    if (dropped.length > 0) {
      const live = new Set<string>();
      for (const e of next.values()) for (const k of e.services) live.add(k.id);
      for (const gone of dropped)
        for (const entry of gone.services) if (!live.has(entry.id)) this.releaseId(entry.id);
    }
    this.encoded = next;
    return {
      updated,
      deleted,
      vips: counts.vips,
      serviceKeys: counts.services,
      backends: counts.backends,
    };
  }

  /** Forgets what was written (the maps were recreated empty). */
  reset(): void {
    this.encoded.clear();
    Object.assign(this.counts, { vips: 0, services: 0, backends: 0 });
    this.ids.clear();
    this.freeIds.length = 0;
    this.nextId = 1;
  }

  /** Encodes one Service's map entries (only when it is new or changed). */
  private encode(service: snapshot.SnapshotService, signature: string, newIds: string[]): Encoded {
    const out: Encoded = { signature, vips: [], services: [], backends: [] };
    const vip = this.address(service.vip);
    const backends = [...new Set(service.backends.map((b) => b.address))].sort();
    const ports = service.ports.filter((p) => PROTOCOLS[p.protocol] !== undefined);
    // One zeroed slab per Service, sliced into its keys and values: far fewer allocations than
    // one buffer per entry, and the structs' padding bytes stay zero as the kernel compares them.
    const perPort =
      MAPS.services.key +
      MAPS.services.value +
      backends.length * (MAPS.backends.key + MAPS.backends.value);
    const slab = Buffer.alloc(ports.length * perPort + MAPS.vips.value);
    let at = 0;
    const take = (n: number): Buffer => slab.subarray(at, (at += n));
    for (const port of ports) {
      const proto = PROTOCOLS[port.protocol] as number;
      const id = `${service.vip}|${port.port}|${proto}`;
      if (!this.ids.has(id)) newIds.push(id);
      const n = this.idOf(id);
      const key = take(MAPS.services.key);
      vip.copy(key, 0);
      key.writeUInt16BE(port.port, 16);
      key.writeUInt8(proto, 18);
      const value = take(MAPS.services.value);
      value.writeUInt32LE(n, 0);
      value.writeUInt32LE(backends.length, 4);
      out.services.push({ id, key, value });
      backends.forEach((address, slot) => {
        const bkey = take(MAPS.backends.key);
        bkey.writeUInt32LE(n, 0);
        bkey.writeUInt32LE(slot, 4);
        const bvalue = take(MAPS.backends.value);
        this.address(address).copy(bvalue, 0);
        bvalue.writeUInt16BE(port.targetPort, 16);
        out.backends.push({ id: `${n}|${slot}`, key: bkey, value: bvalue });
      });
    }
    if (ports.length > 0) {
      const value = take(MAPS.vips.value);
      value.writeUInt32LE(ports.length, 0);
      out.vips.push({ id: service.vip, key: vip, value });
    }
    return out;
  }

  /** An address's 16 bytes, parsed once per distinct text. */
  private address(text: string): Buffer {
    let bytes = this.addresses.get(text);
    if (!bytes) {
      bytes = addressBytes(text);
      if (this.addresses.size > 4 * MAP_CAPACITY.backends) this.addresses.clear();
      this.addresses.set(text, bytes);
    }
    return bytes;
  }

  private idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.nextId++;
      this.ids.set(key, id);
    }
    return id;
  }

  private releaseId(key: string): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    this.ids.delete(key);
    this.freeIds.push(id);
  }
}

/** Everything of a Service the maps depend on, as one string. */
function signatureOf(service: snapshot.SnapshotService): string {
  const ports = service.ports.map((p) => `${p.port}/${p.targetPort}/${p.protocol}`).join(',');
  return `${service.vip} ${ports} ${service.backends.map((b) => b.address).join(',')}`;
}
