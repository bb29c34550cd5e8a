import { snapshot } from '@podmin/agent-contracts';
import { MapProgrammer, type WritableMap } from './map-programmer';
import { backendKey, serviceKey } from './layout';

/** An in-memory map that records every write. */
class MemoryMap implements WritableMap {
  readonly entries = new Map<string, string>();
  readonly log: string[] = [];
  constructor(private readonly name: string) {}
  update(key: Buffer, value: Buffer): void {
    this.entries.set(key.toString('hex'), value.toString('hex'));
    this.log.push(`${this.name}+`);
  }
  delete(key: Buffer): boolean {
    this.log.push(`${this.name}-`);
    return this.entries.delete(key.toString('hex'));
  }
}

const TCP = snapshot.SnapshotPort_Protocol.TCP;
const UDP = snapshot.SnapshotPort_Protocol.UDP;

function service(name: string, vip: string, backends: string[]): snapshot.SnapshotService {
  return {
    namespace: 'default',
    name,
    vip,
    ports: [
      { port: 80, targetPort: 8080, protocol: TCP },
      { port: 53, targetPort: 5353, protocol: UDP },
    ],
    backends: backends.map((address) => ({ address, nodeId: 'n1' })),
  };
}

/** The write log as runs of the same operation, in order: `['backends+ ×4', 'vips+ ×1']`. */
function runs(log: readonly string[]): string[] {
  const out: Array<{ op: string; count: number }> = [];
  for (const op of log) {
    const last = out.at(-1);
    if (last?.op === op) last.count++;
    else out.push({ op, count: 1 });
  }
  return out.map((r) => `${r.op} ×${r.count}`);
}

function setup(): {
  maps: Record<'vips' | 'services' | 'backends', MemoryMap>;
  p: MapProgrammer;
  log: string[];
} {
  const log: string[] = [];
  const maps = {
    vips: new MemoryMap('vips'),
    services: new MemoryMap('services'),
    backends: new MemoryMap('backends'),
  };
  for (const m of Object.values(maps)) m.log.push = (...items: string[]) => log.push(...items);
  return { maps, p: new MapProgrammer(maps), log };
}

describe('MapProgrammer', () => {
  it('writes one VIP, one key per port and one backend entry per port and backend', () => {
    const { maps, p } = setup();
    const result = p.program([service('web', 'fd50:6f64:6d69::1', ['2001:db8::2', '2001:db8::1'])]);
    expect(result).toEqual({ updated: 7, deleted: 0, vips: 1, serviceKeys: 2, backends: 4 });
    expect(maps.vips.entries.size).toBe(1);
    const key = serviceKey('fd50:6f64:6d69::1', 80, 6).toString('hex');
    const value = Buffer.from(maps.services.entries.get(key) ?? '', 'hex');
    expect(value.readUInt32LE(4)).toBe(2);
    // Slots follow address order, so slot 0 is 2001:db8::1 with the TCP target port.
    const slot0 = Buffer.from(
      maps.backends.entries.get(backendKey(value.readUInt32LE(0), 0).toString('hex')) ?? '',
      'hex',
    );
    expect(slot0.subarray(0, 16).toString('hex')).toBe('20010db8000000000000000000000001');
    expect(slot0.readUInt16BE(16)).toBe(8080);
  });

  it('rewrites nothing for an equal snapshot and only what changed otherwise', () => {
    const { maps, p, log } = setup();
    p.program([
      service('a', 'fd50:6f64:6d69::1', ['2001:db8::1']),
      service('b', 'fd50:6f64:6d69::2', ['2001:db8::9']),
    ]);
    log.length = 0;
    expect(
      p.program([
        service('a', 'fd50:6f64:6d69::1', ['2001:db8::1']),
        service('b', 'fd50:6f64:6d69::2', ['2001:db8::9']),
      ]).updated,
    ).toBe(0);
    expect(log).toEqual([]);
    const r = p.program([
      service('a', 'fd50:6f64:6d69::1', ['2001:db8::1', '2001:db8::3']),
      service('b', 'fd50:6f64:6d69::2', ['2001:db8::9']),
    ]);
    // a's two keys get count 2 and a second slot each; b is untouched.
    expect(r).toMatchObject({ updated: 4, deleted: 0 });
    expect(runs(log)).toEqual(['backends+ ×2', 'services+ ×2']);
    expect(maps.backends.entries.size).toBe(6);
  });

  it('orders writes so no key points at a missing slot, and deletes in reverse', () => {
    const { maps, p, log } = setup();
    p.program([service('a', 'fd50:6f64:6d69::1', ['2001:db8::1', '2001:db8::2'])]);
    expect(runs(log)).toEqual(['backends+ ×4', 'services+ ×2', 'vips+ ×1']);
    log.length = 0;
    p.program([service('a', 'fd50:6f64:6d69::1', ['2001:db8::2'])]);
    // Count shrinks first, then the stale slots go.
    expect(runs(log)).toEqual(['backends+ ×2', 'services+ ×2', 'backends- ×2']);
    log.length = 0;
    p.program([service('b', 'fd50:6f64:6d69::2', ['2001:db8::2'])]);
    expect(log.indexOf('vips-')).toBeLessThan(log.indexOf('services-'));
    expect(log.lastIndexOf('services-')).toBeLessThan(log.lastIndexOf('backends-'));
    expect(maps.vips.entries.size).toBe(1);
    expect(maps.services.entries.size).toBe(2);
    expect(maps.backends.entries.size).toBe(2);
  });

  it('keeps a Service with no ready backend as a key with count 0 (fails closed)', () => {
    const { maps, p } = setup();
    p.program([service('a', 'fd50:6f64:6d69::1', [])]);
    const value = Buffer.from(
      maps.services.entries.get(serviceKey('fd50:6f64:6d69::1', 80, 6).toString('hex')) ?? '',
      'hex',
    );
    expect(value.readUInt32LE(4)).toBe(0);
    expect(maps.backends.entries.size).toBe(0);
  });

  it('refuses a snapshot over a bound before writing anything', () => {
    const { maps, p } = setup();
    const many = Array.from({ length: 33_000 }, (_, i) =>
      service(`s${i}`, `fd50:6f64:6d69::${(i + 1).toString(16)}`, []),
    );
    expect(() => p.program(many)).toThrow(
      /needs 66000 Service keys; the dataplane holds at most 65536/,
    );
    expect(maps.services.entries.size + maps.vips.entries.size).toBe(0);
  });
});
