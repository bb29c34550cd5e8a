import { TcpConnectionTable, type TcpConnectionLimits } from './tcp-connection-table';

/** A connection as the table sees it: a name, and whether a query is in progress on it. */
interface FakeConnection {
  name: string;
  busy: boolean;
}

const LIMITS: TcpConnectionLimits = {
  maxConnections: 4,
  maxPerSource: 2,
  idleTimeoutMs: 3_000,
  idleTimeoutUnderLoadMs: 1_000,
};

function setup(limits: Partial<TcpConnectionLimits> = {}) {
  const table = new TcpConnectionTable<FakeConnection>({ ...LIMITS, ...limits }, (c) => c.busy);
  const conn = (name: string, busy = false): FakeConnection => ({ name, busy });
  const names = (cs: readonly FakeConnection[]) => cs.map((c) => c.name);
  return { table, conn, names };
}

describe('TcpConnectionTable admission', () => {
  it('admits without closing anything while under both limits', () => {
    const { table, conn } = setup();
    expect(table.add(conn('a1'), 'A', 0)).toEqual({ admitted: true, evicted: [] });
    expect(table.add(conn('b1'), 'B', 1)).toEqual({ admitted: true, evicted: [] });
    expect(table.size).toBe(2);
    expect(table.sizeOf('A')).toBe(1);
  });

  it('over the total, closes the connection idle the longest of any source', () => {
    const { table, conn, names } = setup({ maxPerSource: 10 });
    const [a, b, c, d] = [conn('a'), conn('b'), conn('c'), conn('d')];
    table.add(a, 'A', 0);
    table.add(b, 'B', 1);
    table.add(c, 'C', 2);
    table.add(d, 'D', 3);
    const result = table.add(conn('e'), 'E', 4);
    expect(result).toEqual({ admitted: true, evicted: [a] });
    expect(table.size).toBe(4);
    expect(names(table.connections())).toEqual(['b', 'c', 'd', 'e']);
  });

  it('counts idleness from the last complete query, not the accept', () => {
    const { table, conn } = setup({ maxPerSource: 10 });
    const [a, b, c, d] = [conn('a'), conn('b'), conn('c'), conn('d')];
    table.add(a, 'A', 0);
    table.add(b, 'B', 1);
    table.add(c, 'C', 2);
    table.add(d, 'D', 3);
    table.touch(a, 5);
    expect(table.add(conn('e'), 'E', 6)).toEqual({ admitted: true, evicted: [b] });
  });

  it('over the per-source limit, closes that source’s oldest idle one, even if another is older', () => {
    const { table, conn } = setup();
    const older = conn('b-old');
    const [a1, a2] = [conn('a1'), conn('a2')];
    table.add(older, 'B', 0);
    table.add(a1, 'A', 1);
    table.add(a2, 'A', 2);
    expect(table.add(conn('a3'), 'A', 3)).toEqual({ admitted: true, evicted: [a1] });
    expect(table.sizeOf('A')).toBe(2);
    expect(table.sizeOf('B')).toBe(1);
  });

  it('never closes a connection with a query in progress: the oldest idle after it goes', () => {
    const { table, conn } = setup({ maxPerSource: 10 });
    const busy = conn('busy', true);
    const idle = conn('idle');
    table.add(busy, 'A', 0);
    table.add(idle, 'B', 1);
    table.add(conn('c'), 'C', 2);
    table.add(conn('d'), 'D', 3);
    expect(table.add(conn('e'), 'E', 4)).toEqual({ admitted: true, evicted: [idle] });
  });

  it('reads busyness when it decides: a connection that finished its query can go', () => {
    const { table, conn } = setup({ maxConnections: 1 });
    const a = conn('a', true);
    table.add(a, 'A', 0);
    expect(table.add(conn('b'), 'B', 1)).toEqual({ admitted: false });
    a.busy = false;
    expect(table.add(conn('c'), 'C', 2)).toEqual({ admitted: true, evicted: [a] });
  });

  it('refuses the newcomer, changing nothing, when every candidate over the total is busy', () => {
    const { table, conn, names } = setup({ maxPerSource: 10 });
    for (const name of ['a', 'b', 'c', 'd']) table.add(conn(name, true), name, 0);
    expect(table.add(conn('e'), 'E', 1)).toEqual({ admitted: false });
    expect(names(table.connections())).toEqual(['a', 'b', 'c', 'd']);
  });

  it('refuses a source at its limit whose connections are all busy, though others are idle', () => {
    const { table, conn } = setup();
    table.add(conn('b'), 'B', 0);
    table.add(conn('a1', true), 'A', 1);
    table.add(conn('a2', true), 'A', 2);
    expect(table.add(conn('a3'), 'A', 3)).toEqual({ admitted: false });
    expect(table.size).toBe(3);
  });

  it('frees a slot on remove, and ignores a connection it does not hold', () => {
    const { table, conn } = setup({ maxConnections: 1 });
    const a = conn('a', true);
    table.add(a, 'A', 0);
    table.remove(conn('stranger'));
    table.remove(a);
    table.remove(a);
    expect(table.size).toBe(0);
    expect(table.sizeOf('A')).toBe(0);
    expect(table.add(conn('b', true), 'B', 1)).toEqual({ admitted: true, evicted: [] });
  });
});

describe('TcpConnectionTable idle timeout', () => {
  it('closes connections idle for the timeout since accept or last query, busy or not', () => {
    const { table, conn, names } = setup({ maxConnections: 100, maxPerSource: 100 });
    const [a, b, c] = [conn('a'), conn('b', true), conn('c')];
    table.add(a, 'A', 0);
    table.add(b, 'A', 100);
    table.add(c, 'A', 200);
    table.touch(a, 2_500);
    expect(table.expire(2_999)).toEqual([]);
    expect(names(table.expire(3_100))).toEqual(['b']);
    expect(names(table.expire(5_499))).toEqual(['c']);
    expect(names(table.expire(5_500))).toEqual(['a']);
    expect(table.size).toBe(0);
  });

  it('uses the shorter timeout only while more than half the limit is open', () => {
    const { table, conn, names } = setup({ maxConnections: 4, maxPerSource: 4 });
    expect(table.idleTimeoutMs()).toBe(3_000);
    table.add(conn('a'), 'A', 0);
    table.add(conn('b'), 'A', 10);
    expect(table.idleTimeoutMs()).toBe(3_000);
    table.add(conn('c'), 'A', 20);
    expect(table.idleTimeoutMs()).toBe(1_000);
    // Three open, above half: 'a' goes at 1 s; then two are open and 3 s applies again.
    expect(names(table.expire(1_015))).toEqual(['a']);
    expect(table.idleTimeoutMs()).toBe(3_000);
    expect(table.expire(2_000)).toEqual([]);
    expect(names(table.expire(3_020))).toEqual(['b', 'c']);
  });
});
