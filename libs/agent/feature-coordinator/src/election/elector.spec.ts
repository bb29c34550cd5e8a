import { FakeLeaseBucket } from '../__fixtures__/fake-lease-bucket';
import type { FakeLeaseClient } from '../__fixtures__/fake-lease-bucket';
import { FakeTime, settle } from '../__fixtures__/fake-time';
import type { FakeProcess } from '../__fixtures__/fake-time';
import { RecordingLog } from '../__fixtures__/recording-log';
import { DutyGate } from './duty-gate';
import { DEFAULT_ELECTION_TIMING, type ElectionTiming } from './election-timing';
import { Elector } from './elector';
import type { LeaderView } from './elector-options';
import type { DeposedReason } from './leader-term';
import {
  LEADER_RECORD_KEY,
  goTimeFromDate,
  isResigned,
  parseLeaderRecord,
  serializeLeaderRecord,
} from './leader-record';

const KEY = LEADER_RECORD_KEY;
const { leaseMs: LEASE, pollMs: POLL, renewMarginMs: MARGIN } = DEFAULT_ELECTION_TIMING;

/** One simulated node: its process (clocks, timer), bucket client, elector and what happened when. */
interface Node {
  id: string;
  proc: FakeProcess;
  client: FakeLeaseClient;
  elector: Elector;
  log: RecordingLog;
  stop: AbortController;
  done: Promise<void>;
  timeline: Array<{ atMs: number; event: 'elected' | 'deposed'; reason?: DeposedReason }>;
  changes: Array<LeaderView | undefined>;
}

describe('Elector (fake bucket, fake clocks)', () => {
  let time: FakeTime;
  let bucket: FakeLeaseBucket;
  let nodes: Node[];

  beforeEach(() => {
    time = new FakeTime();
    bucket = new FakeLeaseBucket(() => time.nowMs);
    nodes = [];
  });

  afterEach(async () => {
    for (const node of nodes) {
      node.proc.frozen = false;
      node.stop.abort();
    }
    await settle();
    await Promise.all(nodes.map((n) => n.done));
  });

  function node(
    id: string,
    options: { wallSkewMs?: number; timing?: Partial<ElectionTiming> } = {},
  ): Node {
    const proc = time.process(id, options.wallSkewMs);
    const client = bucket.client(id);
    const log = new RecordingLog();
    const elector = new Elector(
      { store: client, monotonic: proc.monotonic, wall: proc.wall, timer: proc.timer, log },
      { id, addr: `[2600::${nodes.length + 1}]:8081`, timing: options.timing, random: () => 0.5 },
    );
    const stop = new AbortController();
    const created: Node = {
      id,
      proc,
      client,
      elector,
      log,
      stop,
      done: Promise.resolve(),
      timeline: [],
      changes: [],
    };
    elector.onElected(() => created.timeline.push({ atMs: time.nowMs, event: 'elected' }));
    elector.onDeposed((reason) =>
      created.timeline.push({ atMs: time.nowMs, event: 'deposed', reason }),
    );
    elector.onLeaderChanged((view) => created.changes.push(view));
    nodes.push(created);
    return created;
  }

  function start(n: Node): void {
    n.done = n.elector.run(n.stop.signal);
  }

  /** Starts `a`, which leads, then `b`, which has followed it for one poll. */
  async function leaderThenFollower(): Promise<{ a: Node; b: Node }> {
    const a = node('a');
    start(a);
    await settle();
    const b = node('b');
    start(b);
    await time.advance(POLL);
    return { a, b };
  }

  const record = () => parseLeaderRecord(bucket.text(KEY) ?? '');
  const leaders = () => nodes.filter((n) => n.elector.isLeader()).map((n) => n.id);

  it('creates the record when absent and leads', async () => {
    const a = node('a');
    start(a);
    await settle();
    expect(a.elector.isLeader()).toBe(true);
    expect(bucket.writes('a')).toEqual([{ client: 'a', op: 'putIfAbsent', atMs: 0, result: 'ok' }]);
    expect(record()).toMatchObject({ leaderID: 'a', leaderAddr: '[2600::1]:8081' });
    expect(a.elector.leader()).toEqual({ id: 'a', addr: '[2600::1]:8081' });
    expect(a.timeline).toEqual([{ atMs: 0, event: 'elected' }]);
    expect(a.log.messages()).toContain('become leader');
  });

  it('renews with If-Match every poll and stays leader', async () => {
    const a = node('a');
    start(a);
    await settle();
    const etags = new Set<string>([bucket.objects.get(KEY)!.etag]);
    for (let i = 0; i < 12; i++) {
      await time.advance(POLL);
      etags.add(bucket.objects.get(KEY)!.etag);
      expect(a.elector.isLeader()).toBe(true);
    }
    expect(bucket.writes('a', 'ok').map((w) => w.op)).toEqual([
      'putIfAbsent',
      ...Array<string>(12).fill('putIfMatch'),
    ]);
    expect(etags.size).toBe(13);
    expect(a.timeline).toHaveLength(1);
  });

  it('follows a fresh foreign record whatever the clocks say', async () => {
    // a's wall clock is two hours behind: an s3lect reader would call its record stale.
    const a = node('a', { wallSkewMs: -2 * 3600_000 });
    start(a);
    await settle();
    const b = node('b', { wallSkewMs: +3600_000 });
    start(b);
    await time.advance(3 * LEASE);
    expect(leaders()).toEqual(['a']);
    expect(bucket.writes('b')).toEqual([]);
    expect(b.elector.leader()).toEqual({ id: 'a', addr: '[2600::1]:8081' });
    expect(b.changes).toEqual([{ id: 'a', addr: '[2600::1]:8081' }]);
  });

  it('probes an unreachable bucket at most once per poll, even after the lease it saw expired', async () => {
    const { a, b } = await leaderThenFollower();
    expect(b.elector.leader()?.id).toBe('a');
    // The bucket goes away for both nodes for three leases: the lease b saw expires meanwhile.
    a.client.unavailable = true;
    b.client.unavailable = true;
    const before = bucket.ops.length;
    const outageMs = 3 * LEASE;
    await time.advance(outageMs);
    const during = bucket.ops.slice(before);
    for (const id of ['a', 'b']) {
      const probes = during.filter((op) => op.client === id).length;
      // Healthy: one read (and a leader's renew) per poll; failing: no more often.
      expect(probes).toBeLessThanOrEqual(Math.ceil(outageMs / POLL) + 1);
      expect(probes).toBeGreaterThanOrEqual(Math.floor(outageMs / (POLL * 1.1)) - 1);
    }
    expect(a.elector.isLeader()).toBe(false);
    // One warning says the bucket is failing; repeats are the logger's to fold.
    expect(b.log.messages().filter((m) => m.startsWith('bucket failing'))).toHaveLength(1);
    expect(b.elector.fault()).toMatch(
      /^election: dns\/leader\.json unreachable since \d{4}-\d\d-\d\dT[\d:.]+Z: /,
    );
    // Back: within one poll plus jitter a leader holds the record again.
    a.client.unavailable = false;
    b.client.unavailable = false;
    const backAtMs = time.nowMs;
    const healedAtMs = await time.advanceUntil(() => leaders().length === 1, 3 * POLL);
    expect(healedAtMs - backAtMs).toBeLessThanOrEqual(POLL * 1.1 + 10);
    expect(b.log.messages()).toContain('reach leader record again');
    await time.advance(2 * POLL);
    expect(a.elector.fault()).toBeUndefined();
    expect(b.elector.fault()).toBeUndefined();
  });

  it('takes over a record whose ETag stopped changing, a lease after first seeing it', async () => {
    // Written "just now" by a node that then died: the fresh timestamp must not matter.
    const ghost = bucket.store(
      KEY,
      serializeLeaderRecord({
        leaderID: 'ghost',
        leaderAddr: '[2600::9]:8081',
        lastUpdated: goTimeFromDate(new Date(Date.UTC(2026, 11, 1, 10, 0, 0))),
      }),
    );
    const b = node('b');
    start(b);
    await settle();
    expect(b.elector.leader()).toEqual({ id: 'ghost', addr: '[2600::9]:8081' });
    await time.advance(LEASE - 1);
    expect(b.elector.isLeader()).toBe(false);
    const electedAt = await time.advanceUntil(() => b.elector.isLeader(), 10, 1);
    expect(electedAt).toBeLessThanOrEqual(LEASE + 1);
    expect(b.timeline).toEqual([{ atMs: electedAt, event: 'elected' }]);
    expect(bucket.writes('b')).toEqual([
      { client: 'b', op: 'putIfMatch', atMs: electedAt, result: 'ok' },
    ]);
    expect(bucket.objects.get(KEY)!.etag).not.toBe(ghost);
    expect(record().leaderID).toBe('b');
  });

  it('lets exactly one of two racing electors win the create', async () => {
    const a = node('a');
    const b = node('b');
    start(a);
    start(b);
    await settle();
    expect(leaders()).toHaveLength(1);
    const [winner] = leaders();
    const loser = winner === 'a' ? b : a;
    expect(bucket.writes(undefined, 'ok')).toHaveLength(1);
    expect(bucket.writes(loser.id)).toEqual([
      { client: loser.id, op: 'putIfAbsent', atMs: 0, result: 'PRECONDITION_FAILED' },
    ]);
    expect(loser.elector.leader()?.id).toBe(winner);
    await time.advance(2 * LEASE);
    expect(leaders()).toEqual([winner]);
    expect(loser.timeline).toEqual([]);
  });

  it('lets exactly one of two followers take over a stale record', async () => {
    bucket.store(KEY, '{"leaderID":"ghost","lastUpdated":"2026-12-01T10:00:00Z"}');
    const a = node('a');
    const b = node('b');
    start(a);
    start(b);
    await time.advance(LEASE + POLL);
    expect(leaders()).toHaveLength(1);
    const takeovers = bucket.writes().filter((w) => w.atMs === LEASE);
    expect(takeovers.map((w) => w.result).sort()).toEqual(['PRECONDITION_FAILED', 'ok']);
    expect(record().leaderID).toBe(leaders()[0]);
  });

  it('a frozen leader is out before anyone takes over, and says so when it resumes', async () => {
    const { a, b } = await leaderThenFollower();
    const lastRenew = bucket.writes('a', 'ok').at(-1)!.atMs;
    expect(lastRenew).toBe(POLL);
    const token = new DutyGate(a.elector).current()!;
    expect(token.valid()).toBe(true);

    a.proc.frozen = true; // SIGSTOP: a's timers stop, its monotonic clock does not
    const bElectedAt = await time.advanceUntil(() => b.elector.isLeader(), 2 * LEASE, 100);
    expect(b.elector.isLeader()).toBe(true);

    // a's term ended on its own clock at lastRenew + lease − margin, before b could lead.
    const aDeadline = lastRenew + LEASE - MARGIN;
    expect(aDeadline).toBeLessThan(bElectedAt);
    expect(bElectedAt).toBeGreaterThanOrEqual(lastRenew + LEASE);
    expect(bElectedAt).toBeLessThanOrEqual(lastRenew + LEASE + POLL);
    expect(a.elector.isLeader()).toBe(false);
    expect(token.valid()).toBe(false);
    expect(() => token.assertValid('writing dns/services.pb')).toThrow(/no longer the leader/);

    const aWritesBefore = bucket.writes('a').length;
    await time.thaw(a.proc); // SIGCONT
    const deposed = a.timeline.find((e) => e.event === 'deposed');
    expect(deposed).toEqual({ atMs: bElectedAt, event: 'deposed', reason: 'renew-deadline' });
    expect(bucket.writes('a').length).toBe(aWritesBefore); // it wrote nothing on resuming
    expect(token.signal.aborted).toBe(true);
    const stopLine = a.log.lines.find((l) => l.msg === 'stop leader duties');
    expect(stopLine?.fields).toMatchObject({ reason: 'renew-deadline' });
    expect(a.log.messages().indexOf('stop leader duties')).toBeLessThan(
      a.log.messages().lastIndexOf('leader changed'),
    );
    await time.advance(2 * POLL);
    expect(leaders()).toEqual(['b']);
    expect(a.elector.leader()?.id).toBe('b');
  });

  it('a leader that loses the bucket deposes within lease − margin, before the follower leads', async () => {
    const { a, b } = await leaderThenFollower();
    const lastRenew = bucket.writes('a', 'ok').at(-1)!.atMs;
    a.client.unavailable = true;
    await time.advanceUntil(() => b.elector.isLeader(), 2 * LEASE, 100);
    const deposed = a.timeline.find((e) => e.event === 'deposed')!;
    const elected = b.timeline.find((e) => e.event === 'elected')!;
    expect(deposed).toEqual({
      atMs: lastRenew + LEASE - MARGIN,
      event: 'deposed',
      reason: 'renew-deadline',
    });
    expect(deposed.atMs).toBeLessThan(elected.atMs);
    expect(a.log.messages()).toContain('read leader record failed');
    // Back on the bucket it sees b's record and follows.
    a.client.unavailable = false;
    await time.advance(POLL);
    expect(leaders()).toEqual(['b']);
    expect(a.elector.leader()?.id).toBe('b');
  });

  it('deposes on time even when its timers fire a little early', async () => {
    const a = node('a');
    a.proc.earlyMs = 1;
    start(a);
    await settle();
    a.client.unavailable = true;
    await time.advance(LEASE);
    expect(a.timeline).toEqual([
      { atMs: 0, event: 'elected' },
      { atMs: LEASE - MARGIN, event: 'deposed', reason: 'renew-deadline' },
    ]);
  });

  it('retries a write answered with 409 ConditionalRequestConflict after a short jitter', async () => {
    const a = node('a');
    a.client.conflictsNext = 2;
    start(a);
    await settle();
    expect(a.elector.isLeader()).toBe(false);
    await time.advance(DEFAULT_ELECTION_TIMING.conflictRetryMs * 2);
    expect(a.elector.isLeader()).toBe(true);
    expect(bucket.writes('a').map((w) => [w.atMs, w.result])).toEqual([
      [0, 'CONFLICT'],
      [100, 'CONFLICT'],
      [200, 'ok'],
    ]);
  });

  it('gives up on a write after the bounded 409 retries and tries again next round', async () => {
    const a = node('a', { timing: { conflictRetries: 1 } });
    a.client.conflictsNext = 3;
    start(a);
    await time.advance(POLL - 1);
    expect(a.elector.isLeader()).toBe(false);
    expect(bucket.writes('a').map((w) => w.result)).toEqual(['CONFLICT', 'CONFLICT']);
    await time.advance(1000);
    expect(a.elector.isLeader()).toBe(true);
  });

  it('re-reads after a 412 on its own create and leads when the stored body is its own', async () => {
    const a = node('a');
    // The create lands, but the answer is 412 (an SDK retry of the request that succeeded).
    a.client.applyThenFail = { count: 1, code: 'PRECONDITION_FAILED' };
    start(a);
    await settle();
    expect(a.elector.isLeader()).toBe(true);
    expect(a.timeline).toEqual([{ atMs: 0, event: 'elected' }]);
    expect(a.log.messages()).toContain('leader record write landed despite its answer');
    await time.advance(POLL);
    expect(bucket.writes('a').map((w) => `${w.op} ${w.result}`)).toEqual([
      'putIfAbsent PRECONDITION_FAILED',
      'putIfMatch ok',
    ]);
  });

  it('a 412 on its create that is another node’s record means follow', async () => {
    const a = node('a');
    const other = bucket.client('other');
    // Another node creates the record between a's read and a's create.
    const originalCreate = a.client.putIfAbsent.bind(a.client);
    let raced = false;
    a.client.putIfAbsent = async (key, body) => {
      if (!raced) {
        raced = true;
        await other.putIfAbsent(key, '{"leaderID":"other","lastUpdated":"2026-12-01T10:00:00Z"}');
      }
      return originalCreate(key, body);
    };
    start(a);
    await settle();
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.leader()?.id).toBe('other');
    expect(a.timeline).toEqual([]);
  });

  it('keeps leading when a renew landed but its answer was lost', async () => {
    const a = node('a');
    start(a);
    await settle();
    a.client.applyThenFail = { count: 1, code: 'BUCKET_UNAVAILABLE' };
    await time.advance(POLL);
    expect(a.log.messages()).toContain('write leader record failed');
    await time.advance(POLL);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.timeline).toEqual([{ atMs: 0, event: 'elected' }]);
    expect(bucket.writes('a').map((w) => w.result)).toEqual(['ok', 'BUCKET_UNAVAILABLE', 'ok']);
  });

  it('deposes at once when another node replaced its record', async () => {
    const a = node('a');
    start(a);
    await settle();
    bucket.store(KEY, '{"leaderID":"intruder","lastUpdated":"2026-12-01T10:00:01Z"}');
    await time.advance(POLL);
    expect(a.timeline.at(-1)).toEqual({ atMs: POLL, event: 'deposed', reason: 'lost-record' });
    expect(a.elector.leader()?.id).toBe('intruder');
    expect(bucket.writes('a')).toHaveLength(1);
  });

  it('resigns on stop so a follower leads at its next round, not a lease later', async () => {
    const { a, b } = await leaderThenFollower();
    a.stop.abort();
    await a.done;
    expect(a.timeline.at(-1)).toEqual({ atMs: POLL, event: 'deposed', reason: 'stopping' });
    expect(isResigned(record())).toBe(true);
    expect(record().leaderID).toBe('a');
    expect(bucket.text(KEY)).toBe(
      '{"leaderID":"a","leaderAddr":"[2600::1]:8081","lastUpdated":"0001-01-01T00:00:00Z"}',
    );
    expect(b.elector.isLeader()).toBe(false);
    const electedAt = await time.advanceUntil(() => b.elector.isLeader(), LEASE, 100);
    expect(electedAt).toBeLessThanOrEqual(2 * POLL);
    expect(a.log.messages()).toContain('resign leadership');
  });

  it('a follower that stops writes nothing', async () => {
    const { b } = await leaderThenFollower();
    b.stop.abort();
    await b.done;
    expect(bucket.writes('b')).toEqual([]);
    expect(record().leaderID).toBe('a');
    expect(b.timeline).toEqual([]);
  });

  it('takes over an unreadable record after a lease, and survives failing listeners', async () => {
    bucket.store(KEY, 'not json');
    const a = node('a');
    a.elector.onElected(() => {
      throw new Error('listener bug');
    });
    start(a);
    await settle();
    expect(a.elector.leader()).toBeUndefined();
    expect(a.log.messages()).toContain('leader record unreadable');
    await time.advance(LEASE + 1);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.log.messages()).toContain('election listener failed');
  });

  it('keeps running when the store throws something unexpected', async () => {
    const a = node('a');
    let calls = 0;
    const realGet = a.client.get.bind(a.client);
    a.client.get = (key, options) => {
      if (calls++ === 0) throw new TypeError('boom');
      return realGet(key, options);
    };
    start(a);
    await settle();
    expect(a.log.messages()).toContain('read leader record failed');
    await time.advance(POLL);
    expect(a.elector.isLeader()).toBe(true);
  });

  it('rejects inconsistent timings, listing every problem', () => {
    const proc = time.process('x');
    const make = (timing: Partial<ElectionTiming>, id = 'x') =>
      new Elector(
        {
          store: bucket.client('x'),
          monotonic: proc.monotonic,
          wall: proc.wall,
          timer: proc.timer,
        },
        { id, addr: '', timing },
      );
    expect(() => make({ leaseMs: 10_000, renewMarginMs: 10_000 })).toThrow(
      /renewMarginMs must be < leaseMs/,
    );
    expect(() => make({ pollMs: 30_000 }, 'bad id')).toThrow(
      /id must be .*; pollMs must be < leaseMs − renewMarginMs/,
    );
    expect(() => make({ conflictRetries: -1 })).toThrow(/conflictRetries/);
    expect(make({ leaseMs: 3000, pollMs: 500, renewMarginMs: 1000 }).settings.leaseMs).toBe(3000);
  });
});
