import { coordinator } from '@podmin/agent-contracts';
import type { LogLevel } from '@podmin/agent-util-logging';
import { serviceVip } from '@podmin/util-desired-state';
import { CoordinatorZoneSource } from './coordinator-zone-source';
import type { DnsZone } from './dns-zone';
import type { ServicesWatch } from './dns.ports';

/** A scripted watch: each call takes the next step (a view, or an error to throw). */
function scripted(
  steps: Array<coordinator.ServicesView | Error>,
): ServicesWatch & { calls: number } {
  const watch = {
    calls: 0,
    watchServices: async () => {
      const step = steps[watch.calls++];
      await new Promise((r) => setTimeout(r, 1));
      if (step === undefined) return new Promise<never>(() => undefined);
      if (step instanceof Error) throw step;
      return step;
    },
  };
  return watch;
}

const view = (revision: string, names: string[]): coordinator.ServicesView => ({
  source: coordinator.ServicesView_Source.LEADER,
  unchanged: false,
  snapshot: {
    generation: 1,
    revision,
    services: names.map((name) => ({
      namespace: 'default',
      name,
      vip: serviceVip('c', 'default', name),
      ports: [],
      backends: [],
    })),
  },
});

describe('CoordinatorZoneSource', () => {
  it('starts empty, builds zones from identities only, and logs an outage once', async () => {
    const logs: Array<[LogLevel, string]> = [];
    const down = new Error('UNAVAILABLE');
    const watch = scripted([
      view('r1', ['web']),
      view('r2', ['web']),
      down,
      down,
      down,
      view('r3', ['api']),
    ]);
    const source = new CoordinatorZoneSource(watch, {
      cluster: 'c',
      logger: { event: (level, msg) => logs.push([level, msg]) },
      initialBackoffMs: 1,
      maxBackoffMs: 2,
    });
    const zones: DnsZone[] = [];
    const unsubscribe = source.subscribe((z) => zones.push(z));
    expect(zones[0]?.size).toBe(0);
    expect(zones[0]?.ready).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(watch.calls).toBe(7);
    // r2 differs only in backends: no new zone.
    expect(zones.map((z) => z.size)).toEqual([0, 1, 1]);
    expect(zones[1]?.vipOf('default', 'web')).toBe(serviceVip('c', 'default', 'web'));
    expect(zones[2]?.vipOf('default', 'api')).toBe(serviceVip('c', 'default', 'api'));
    expect(logs.filter(([, m]) => m.startsWith('coordinator unreachable'))).toHaveLength(1);
    expect(logs.filter(([, m]) => m === 'coordinator reachable again')).toHaveLength(1);
    expect(source.status()).toMatchObject({ revision: 'r3', unreachable: false });
    unsubscribe();
  });

  it('keeps the last zone when a snapshot cannot be served, and says why', async () => {
    const watch = scripted([view('r1', ['web']), view('r2', ['Bad_Name'])]);
    const source = new CoordinatorZoneSource(watch, {
      cluster: 'c',
      logger: { event: () => undefined },
    });
    const zones: DnsZone[] = [];
    const unsubscribe = source.subscribe((z) => zones.push(z));
    await new Promise((r) => setTimeout(r, 50));
    expect(zones.map((z) => z.size)).toEqual([0, 1]);
    expect(source.status().problem).toContain('snapshot r2 not served');
    expect(source.status().zone.vipOf('default', 'web')).toBeDefined();
    unsubscribe();
  });
});
