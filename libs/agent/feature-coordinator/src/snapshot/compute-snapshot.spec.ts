import { createHash } from 'node:crypto';
import { serviceVip } from '@podmin/util-desired-state';
import { nodeReport, servicePayload } from '../__fixtures__/snapshot-fixtures';
import { computeSnapshot, type NodeEndpoints, type SnapshotInput } from './compute-snapshot';
import { decodeSnapshot, encodeSnapshot } from './snapshot-codec';

const CLUSTER = 'prod';

function backendsOf(input: SnapshotInput, namespace: string, name: string): string[] {
  const service = computeSnapshot(input).snapshot.services.find(
    (s) => s.namespace === namespace && s.name === name,
  );
  if (service === undefined) throw new Error(`no ${namespace}/${name} in the snapshot`);
  return service.backends.map((b) => `${b.nodeId} ${b.address}`);
}

describe('computeSnapshot', () => {
  it('selects only endpoints of the Service namespace', () => {
    const input: SnapshotInput = {
      cluster: CLUSTER,
      services: [servicePayload('shop', 'web', { app: 'web' })],
      nodes: [
        nodeReport(1, [
          { namespace: 'shop', labels: { app: 'web' }, host: 'a' },
          { namespace: 'blog', labels: { app: 'web' }, host: 'b' },
        ]),
      ],
    };
    expect(backendsOf(input, 'shop', 'web')).toEqual(['node-1 2600:1f14:abc:1201:1::a']);
  });

  it('requires every selector key with an equal value and ignores extra labels', () => {
    const input: SnapshotInput = {
      cluster: CLUSTER,
      services: [servicePayload('shop', 'web', { app: 'web', tier: 'front' })],
      nodes: [
        nodeReport(1, [
          { namespace: 'shop', labels: { app: 'web' }, host: '1' },
          { namespace: 'shop', labels: { app: 'web', tier: 'back' }, host: '2' },
          { namespace: 'shop', labels: { app: 'web', tier: 'front', v: '2' }, host: '3' },
          { namespace: 'shop', labels: { app: 'Web', tier: 'front' }, host: '4' },
          { namespace: 'shop', labels: { tier: 'front', app: 'web' }, host: '5' },
        ]),
      ],
    };
    expect(backendsOf(input, 'shop', 'web')).toEqual([
      'node-1 2600:1f14:abc:1201:1::3',
      'node-1 2600:1f14:abc:1201:1::5',
    ]);
  });

  it('selects across NodeGroups and nodes: every reporting node counts', () => {
    const input: SnapshotInput = {
      cluster: CLUSTER,
      services: [servicePayload('shop', 'db', { app: 'db' })],
      nodes: [
        nodeReport(2, [{ namespace: 'shop', labels: { app: 'db' }, host: '7' }]),
        nodeReport(1, [{ namespace: 'shop', labels: { app: 'db' }, host: '7' }]),
      ],
    };
    expect(backendsOf(input, 'shop', 'db')).toEqual([
      'node-1 2600:1f14:abc:1201:1::7',
      'node-2 2600:1f14:abc:1202:1::7',
    ]);
  });

  it("refuses endpoints outside the reporting node's /80 and invalid reports", () => {
    const inside = nodeReport(1, [{ namespace: 'shop', labels: { app: 'web' }, host: '1' }]);
    const nodes: NodeEndpoints[] = [
      {
        ...inside,
        endpoints: [
          ...inside.endpoints,
          // Node 2's prefix, reported by node 1: a node may not claim another's Pods.
          { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1202:1::1' },
          { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1201:2::1' },
          { namespace: 'shop', labels: { app: 'web' }, address: 'not-an-address' },
        ],
      },
      {
        nodeId: 'node-3',
        prefix: '2600:1f14:abc:1203::/64',
        endpoints: [
          { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1203::1' },
        ],
      },
      {
        nodeId: 'node-4',
        prefix: '2600:1f14:abc:1204:1::1/80',
        endpoints: [
          { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1204:1::1' },
        ],
      },
      {
        nodeId: '',
        prefix: '2600:1f14:abc:1205:1::/80',
        endpoints: [
          { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1205:1::1' },
        ],
      },
    ];
    const result = computeSnapshot({
      cluster: CLUSTER,
      services: [servicePayload('shop', 'web', { app: 'web' })],
      nodes,
    });
    expect(result.snapshot.services[0]?.backends).toEqual([
      { address: '2600:1f14:abc:1201:1::1', nodeId: 'node-1' },
    ]);
    expect(decodeSnapshot(encodeSnapshot(result.snapshot))).toEqual(result.snapshot);
    expect(result.refused).toEqual([
      { nodeId: 'node-1', address: '2600:1f14:abc:1202:1::1', reason: 'outside-prefix' },
      { nodeId: 'node-1', address: '2600:1f14:abc:1201:2::1', reason: 'outside-prefix' },
      { nodeId: 'node-1', address: 'not-an-address', reason: 'bad-address' },
      { nodeId: 'node-3', address: '2600:1f14:abc:1203::1', reason: 'bad-prefix' },
      { nodeId: 'node-4', address: '2600:1f14:abc:1204:1::1', reason: 'bad-prefix' },
      { nodeId: '', address: '2600:1f14:abc:1205:1::1', reason: 'bad-node-id' },
    ]);
  });

  it('has no backend for a Pod the node no longer reports Ready', () => {
    const services = [servicePayload('shop', 'web', { app: 'web' })];
    const ready = computeSnapshot({
      cluster: CLUSTER,
      services,
      nodes: [
        nodeReport(1, [
          { namespace: 'shop', labels: { app: 'web' }, host: '1' },
          { namespace: 'shop', labels: { app: 'web' }, host: '2' },
        ]),
      ],
    });
    // The node stops reporting ::2 once kubelet's PodReady turns false.
    const notReady = computeSnapshot({
      cluster: CLUSTER,
      services,
      nodes: [nodeReport(1, [{ namespace: 'shop', labels: { app: 'web' }, host: '1' }])],
    });
    expect(ready.snapshot.services[0]?.backends).toHaveLength(2);
    expect(notReady.snapshot.services[0]?.backends).toEqual([
      { address: '2600:1f14:abc:1201:1::1', nodeId: 'node-1' },
    ]);
    expect(notReady.snapshot.revision).not.toBe(ready.snapshot.revision);
  });

  it('keeps a Service without ready backends, with its VIP and sorted ports', () => {
    const { snapshot } = computeSnapshot({
      cluster: CLUSTER,
      services: [
        servicePayload('shop', 'dns', { app: 'dns' }, [
          { port: 53, protocol: 'UDP' },
          { port: 853, targetPort: 8853 },
          { port: 53, protocol: 'TCP' },
        ]),
      ],
      nodes: [],
    });
    expect(snapshot.services).toEqual([
      {
        namespace: 'shop',
        name: 'dns',
        vip: serviceVip(CLUSTER, 'shop', 'dns'),
        ports: [
          { port: 53, targetPort: 53, protocol: 'TCP' },
          { port: 853, targetPort: 8853, protocol: 'TCP' },
          { port: 53, targetPort: 53, protocol: 'UDP' },
        ],
        backends: [],
      },
    ]);
  });

  it('writes canonical addresses once, keeping the smallest node id for a doubly claimed one', () => {
    const sharedPrefix = '2600:1f14:abc:1201:1::/80';
    const { snapshot } = computeSnapshot({
      cluster: CLUSTER,
      services: [servicePayload('shop', 'web', { app: 'web' })],
      nodes: [
        {
          nodeId: 'node-b',
          prefix: sharedPrefix,
          endpoints: [
            {
              namespace: 'shop',
              labels: { app: 'web' },
              address: '2600:1F14:0abc:1201:0001:0:0:000A',
            },
            { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1201:1::a' },
          ],
        },
        {
          nodeId: 'node-a',
          prefix: sharedPrefix,
          endpoints: [
            { namespace: 'shop', labels: { app: 'web' }, address: '2600:1f14:abc:1201:1::a' },
          ],
        },
      ],
    });
    expect(snapshot.services[0]?.backends).toEqual([
      { address: '2600:1f14:abc:1201:1::a', nodeId: 'node-a' },
    ]);
  });

  it('sorts Services by namespace then name and drops a repeated identical payload', () => {
    const { snapshot, conflicts } = computeSnapshot({
      cluster: CLUSTER,
      services: [
        servicePayload('b', 'a', { app: 'x' }),
        servicePayload('a', 'b', { app: 'x' }),
        servicePayload('a', 'a-b', { app: 'x' }),
        servicePayload('a', 'a', { app: 'x' }),
        servicePayload('b', 'a', { app: 'x' }),
      ],
      nodes: [],
    });
    expect(snapshot.services.map((s) => `${s.namespace}/${s.name}`)).toEqual([
      'a/a',
      'a/a-b',
      'a/b',
      'b/a',
    ]);
    expect(conflicts).toEqual([]);
  });

  it('resolves two different payloads of one Service the same way in any order', () => {
    const one = servicePayload('shop', 'web', { app: 'one' });
    const two = servicePayload('shop', 'web', { app: 'two' });
    const a = computeSnapshot({ cluster: CLUSTER, services: [one, two], nodes: [] });
    const b = computeSnapshot({ cluster: CLUSTER, services: [two, one], nodes: [] });
    expect(a.conflicts).toEqual(['shop/web']);
    expect(encodeSnapshot(a.snapshot).equals(encodeSnapshot(b.snapshot))).toBe(true);
  });

  it('gives identical bytes for shuffled input, and a revision independent of generation', () => {
    const services = Array.from({ length: 40 }, (_, i) =>
      servicePayload(`ns${i % 4}`, `svc-${i}`, { app: `a${i % 10}`, tier: `t${i % 3}` }, [
        { port: 80 + (i % 3) },
        { port: 9000, protocol: 'UDP' },
      ]),
    );
    const nodes = Array.from({ length: 6 }, (_, n) =>
      nodeReport(
        n,
        Array.from({ length: 30 }, (_, e) => ({
          namespace: `ns${e % 4}`,
          labels: { app: `a${e % 10}`, tier: `t${(e + n) % 3}`, pod: `p${e}` },
          host: (e + 1).toString(16),
        })),
      ),
    );
    const base = computeSnapshot({ cluster: CLUSTER, services, nodes, generation: 3 });
    const random = seeded(42);
    const shuffledNodes = shuffle(nodes, random).map((node) => ({
      ...node,
      endpoints: shuffle(node.endpoints, random).map((e) => ({
        ...e,
        labels: Object.fromEntries(shuffle(Object.entries(e.labels), random)),
      })),
    }));
    const shuffledServices = shuffle(services, random).map((s) => {
      const spec = s.object.spec as { selector: Record<string, string>; ports: unknown[] };
      return {
        ...s,
        object: {
          ...s.object,
          spec: {
            selector: Object.fromEntries(shuffle(Object.entries(spec.selector), random)),
            ports: shuffle(spec.ports, random),
          },
        },
      };
    });
    const again = computeSnapshot({
      cluster: CLUSTER,
      services: shuffledServices,
      nodes: shuffledNodes,
      generation: 3,
    });
    expect(base.snapshot.services.some((s) => s.backends.length > 1)).toBe(true);
    expect(encodeSnapshot(again.snapshot).equals(encodeSnapshot(base.snapshot))).toBe(true);
    // computeSnapshot skips the encoder's checks: its output must pass the strict decoder.
    expect(decodeSnapshot(encodeSnapshot(base.snapshot), { cluster: CLUSTER })).toEqual(
      base.snapshot,
    );
    const later = computeSnapshot({ cluster: CLUSTER, services, nodes, generation: 9 });
    expect(later.snapshot.revision).toBe(base.snapshot.revision);
    expect(base.snapshot.revision).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the digest of empty bytes as the revision of an empty cluster', () => {
    const { snapshot } = computeSnapshot({ cluster: CLUSTER, services: [], nodes: [] });
    expect(snapshot).toEqual({
      generation: 0,
      revision: createHash('sha256').update(Buffer.alloc(0)).digest('hex'),
      services: [],
    });
  });
});

/** A deterministic pseudo-random source (mulberry32) so a failing shuffle can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
