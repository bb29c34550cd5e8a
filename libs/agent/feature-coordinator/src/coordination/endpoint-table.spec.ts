import { RecordingLog } from '../__fixtures__/recording-log';
import type { CoordinationPeer, HelloReport, LocalReadyPod } from '../coordinator.ports';
import type { ServiceSnapshot } from '../snapshot/snapshot-codec';
import { EndpointTable } from './endpoint-table';
import { LeaderHelloHandler } from './leader-hello-handler';
import { thrownPodminError } from '../__fixtures__/thrown';

/** A hand-set monotonic clock. */
class FakeMonotonic {
  ms = 1000;
  nowMs(): number {
    return this.ms;
  }
}

const PREFIX = '2600:1f14:abc:1200:1::/80';
const peer = (nodeId = 'n1', nodegroup = 'workers'): CoordinationPeer => ({
  cluster: 'prod',
  nodegroup,
  nodeId,
  addresses: ['2600:1f14:abc:1200::1'],
  remoteAddress: '2600:1f14:abc:1200::1',
});
const pod = (address: string, namespace = 'default'): LocalReadyPod => ({
  namespace,
  pod: `p-${address}`,
  labels: { app: 'web' },
  address,
});
const report = (over: Partial<HelloReport> = {}): HelloReport => ({
  nodeId: 'n1',
  nodegroup: 'workers',
  prefix: PREFIX,
  endpoints: [],
  knownRevision: '',
  leaving: false,
  rollouts: [],
  ...over,
});

function setup(options = {}) {
  const clock = new FakeMonotonic();
  const log = new RecordingLog();
  const table = new EndpointTable({ monotonic: clock, log }, options);
  let changes = 0;
  table.onChange(() => changes++);
  return { clock, log, table, changes: () => changes };
}

describe('EndpointTable', () => {
  it('keeps endpoints inside the /80 and refuses (and logs) the others', () => {
    const { table, log } = setup();
    const outcome = table.report(
      peer(),
      report({
        endpoints: [
          pod('2600:1f14:abc:1200:1::b'),
          pod('2600:1f14:abc:1200:2::66'),
          pod('2600:1F14:abc:1200:1::c'),
          pod('not-an-address'),
          pod('2600:1f14:abc:1200:1::a'),
          pod('2600:1f14:abc:1200:1::a'),
          pod('2600:1f14:abc:1200:1::d', 'Bad_NS'),
        ],
      }),
    );
    expect(outcome.refused).toEqual([
      { address: '2600:1f14:abc:1200:2::66', reason: 'outside-prefix' },
      { address: '2600:1F14:abc:1200:1::c', reason: 'not-canonical' },
      { address: 'not-an-address', reason: 'bad-address' },
      { address: '2600:1f14:abc:1200:1::a', reason: 'duplicate' },
      { address: '2600:1f14:abc:1200:1::d', reason: 'bad-namespace' },
    ]);
    expect(log.lines.filter((l) => l.msg === 'refuse endpoint').map((l) => l.fields)[0]).toEqual({
      node: 'n1',
      address: '2600:1f14:abc:1200:2::66',
      reason: 'outside-prefix',
      prefix: PREFIX,
    });
    expect(log.lines.filter((l) => l.msg === 'refuse endpoint')).toHaveLength(5);
    expect(table.nodes()).toEqual([
      {
        nodeId: 'n1',
        prefix: PREFIX,
        endpoints: [pod('2600:1f14:abc:1200:1::a'), pod('2600:1f14:abc:1200:1::b')],
      },
    ]);
  });

  it("accepts a report only from the peer whose certificate names the report's node and NodeGroup", () => {
    const { table } = setup();
    expect(thrownPodminError(() => table.report(peer('n2'), report())).code).toBe('ACCESS_DENIED');
    expect(thrownPodminError(() => table.report(peer('n1', 'other'), report())).message).toMatch(
      /peer's certificate names node n1 of NodeGroup other/,
    );
    expect(table.nodes()).toEqual([]);
  });

  it('refuses a prefix that is not a canonical global /80 (unique-local only when allowed)', () => {
    const { table } = setup();
    for (const prefix of [
      '2600:1f14:abc:1200:1::/64',
      '2600:1f14:abc:1200:1::1/80',
      '2600:1F14:abc:1200:1::/80',
      'fd00:1:2:3:4::/80',
    ]) {
      expect(thrownPodminError(() => table.report(peer(), report({ prefix }))).code).toBe(
        'INVALID_ARGUMENT',
      );
    }
    const local = setup({ allowUniqueLocal: true }).table;
    expect(
      local.report(
        peer(),
        report({ prefix: 'fd00:1:2:3:4::/80', endpoints: [pod('fd00:1:2:3:4::9')] }),
      ).refused,
    ).toEqual([]);
  });

  it('expires a node not heard from within the lease and notifies once per change', () => {
    const { table, clock, changes, log } = setup({ leaseMs: 35_000 });
    table.report(peer(), report({ endpoints: [pod('2600:1f14:abc:1200:1::a')] }));
    expect(changes()).toBe(1);
    clock.ms += 20_000;
    table.report(peer(), report({ endpoints: [pod('2600:1f14:abc:1200:1::a')] })); // refresh only
    expect(changes()).toBe(1);
    clock.ms += 34_999;
    expect(table.nodes().map((n) => n.nodeId)).toEqual(['n1']);
    clock.ms += 1;
    expect(table.nodes()).toEqual([]);
    expect(changes()).toBe(2);
    expect(log.messages()).toContain('expire node endpoints');
  });

  it('drops a leaving node at once', () => {
    const { table, changes } = setup();
    table.report(peer(), report({ endpoints: [pod('2600:1f14:abc:1200:1::a')] }));
    table.report(peer(), report({ leaving: true }));
    expect(table.nodes()).toEqual([]);
    expect(changes()).toBe(2);
  });

  it("lists reports by node id with the local node's own endpoints replacing a same-id entry", () => {
    const { table } = setup();
    table.report(peer('n3'), report({ nodeId: 'n3' }));
    table.report(peer('n1'), report());
    const local = { nodeId: 'n2', prefix: '2600:1f14:abc:1200:2::/80', endpoints: [] };
    expect(table.nodes(local).map((n) => n.nodeId)).toEqual(['n1', 'n2', 'n3']);
    expect(table.nodes({ ...local, nodeId: 'n1' }).find((n) => n.nodeId === 'n1')?.prefix).toBe(
      '2600:1f14:abc:1200:2::/80',
    );
  });
});

describe('LeaderHelloHandler', () => {
  const snapshot = { generation: 3, revision: 'r3', services: [] } as ServiceSnapshot;

  it('answers with the snapshot, omitting it when the caller holds its revision', async () => {
    const { table } = setup();
    const handler = new LeaderHelloHandler({
      table,
      nodeId: 'leader',
      isLeader: () => true,
      knownLeader: () => undefined,
      snapshot: () => snapshot,
    });
    const answer = await handler.hello(
      peer(),
      report({ endpoints: [pod('2600:1f14:abc:1200:9::1')] }),
    );
    expect(answer).toEqual({
      snapshot,
      leaderId: 'leader',
      refused: [{ address: '2600:1f14:abc:1200:9::1', reason: 'outside-prefix' }],
      admissions: [],
    });
    expect((await handler.hello(peer(), report({ knownRevision: 'r3' }))).snapshot).toBeUndefined();
  });

  it('refuses with PRECONDITION_FAILED naming the leader it knows when it does not lead', async () => {
    const { table } = setup();
    const handler = new LeaderHelloHandler({
      table,
      nodeId: 'n9',
      isLeader: () => false,
      knownLeader: () => ({ id: 'n1', addr: '[2600::1]:8081' }),
      snapshot: () => snapshot,
    });
    await expect(handler.hello(peer(), report())).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
      message: expect.stringContaining('the leader is n1 at [2600::1]:8081'),
    });
    expect(table.nodes()).toEqual([]);
  });
});
