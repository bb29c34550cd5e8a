import { snapshot } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { BpfMap } from './bpf/bpf-map';
import { Dataplane, type LoadedProgram } from './dataplane';
import type { DataplaneInterface } from './interfaces/interfaces';

const logger = { event: () => undefined } as unknown as StructuredLogger;

/** A program whose maps are in memory and whose links are recorded. */
function fakeProgram(): { program: LoadedProgram; attached: Set<number>; closed: () => boolean } {
  const attached = new Set<number>();
  let closed = false;
  const map = (name: string): BpfMap =>
    ({
      name,
      update: () => undefined,
      delete: () => true,
      lookup: () => undefined,
      keys: () => [],
    }) as unknown as BpfMap;
  return {
    attached,
    closed: () => closed,
    program: {
      map,
      attachIngress: (ifindex) => {
        attached.add(ifindex);
        return { ifindex, close: () => attached.delete(ifindex) };
      },
      close: () => {
        closed = true;
      },
    },
  };
}

const web = (backends: string[]): snapshot.ServiceSnapshot => ({
  generation: 1,
  revision: `r-${backends.join(',')}`,
  services: [
    {
      namespace: 'default',
      name: 'web',
      vip: 'fd50:6f64:6d69::1',
      ports: [{ port: 80, targetPort: 8080, protocol: snapshot.SnapshotPort_Protocol.TCP }],
      backends: backends.map((address) => ({ address, nodeId: 'n' })),
    },
  ],
});
const empty: snapshot.ServiceSnapshot = { generation: 2, revision: 'empty', services: [] };

describe('Dataplane', () => {
  let interfaces: DataplaneInterface[];
  const source = { list: () => Promise.resolve(interfaces) };
  beforeEach(() => {
    interfaces = [
      { name: 'veth1', ifindex: 7, roles: ['pod-veth'] },
      { name: 'veth2', ifindex: 8, roles: ['pod-veth'] },
    ];
  });

  it('loads nothing while no Service exists, and then no node IPv6 is needed', async () => {
    const loads: string[] = [];
    const dp = new Dataplane({
      objectPath: '/x.o',
      nodeAddress: '::1',
      interfaces: source,
      logger,
      load: (p) => (loads.push(p), fakeProgram().program),
    });
    await dp.apply(empty);
    expect(loads).toEqual([]);
    expect(dp.status()).toMatchObject({ attached: false, revision: 'empty', problem: undefined });
  });

  it('refuses to load for Services without a routable node IPv6, saying why', async () => {
    const dp = new Dataplane({
      objectPath: '/x.o',
      nodeAddress: 'fe80::1',
      interfaces: source,
      logger,
      load: () => fakeProgram().program,
    });
    await dp.apply(web(['2001:db8::1']));
    expect(dp.status().problem).toMatch(/routable node IPv6.*fe80::1/);
    expect(dp.status().attached).toBe(false);
  });

  it('attaches to new interfaces, lets go of vanished ones, and detaches when Services go', async () => {
    const fake = fakeProgram();
    const dp = new Dataplane({
      objectPath: '/x.o',
      nodeAddress: '2001:db8::10',
      interfaces: source,
      logger,
      load: () => fake.program,
    });
    await dp.apply(web(['2001:db8::1']));
    expect([...fake.attached].sort()).toEqual([7, 8]);
    interfaces = [
      { name: 'veth2', ifindex: 8, roles: ['pod-veth'] },
      { name: 'veth3', ifindex: 9, roles: ['pod-veth'] },
    ];
    await dp.refresh();
    expect([...fake.attached].sort()).toEqual([8, 9]);
    expect(dp.status()).toMatchObject({ attached: true, interfaces: ['veth2', 'veth3'] });
    await dp.apply(empty);
    expect(fake.attached.size).toBe(0);
    expect(fake.closed()).toBe(true);
    expect(dp.status()).toMatchObject({ attached: false, vips: 0, revision: 'empty' });
  });

  it('reports an interface it cannot attach to and keeps the others', async () => {
    const fake = fakeProgram();
    const program: LoadedProgram = {
      ...fake.program,
      attachIngress: (ifindex) => {
        if (ifindex === 8) throw new Error('no such device');
        return fake.program.attachIngress(ifindex);
      },
    };
    const dp = new Dataplane({
      objectPath: '/x.o',
      nodeAddress: '2001:db8::10',
      interfaces: source,
      logger,
      load: () => program,
    });
    await dp.apply(web(['2001:db8::1']));
    expect([...fake.attached]).toEqual([7]);
    expect(dp.status().problem).toBe('not attached to veth2: no such device');
  });
});
