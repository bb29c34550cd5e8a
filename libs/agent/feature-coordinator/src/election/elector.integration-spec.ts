import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
} from '@podmin/data-access-object-store';
import { bundleForNode, emulatorBucket, makeTempDir, waitFor } from '@podmin/testing';
import type { TempDir } from '@podmin/testing';
import { RecordingLog } from '../__fixtures__/recording-log';
import type { LeaseStore } from './election.ports';
import type { Elector } from './elector';
import type { ElectionTiming } from './election-timing';
import { isResigned, parseLeaderRecord } from './leader-record';
import { systemElector } from '../adapters/system-elector';

const TIMING: Partial<ElectionTiming> = { leaseMs: 3000, pollMs: 500, renewMarginMs: 1000 };
const LEASE = TIMING.leaseMs!;
const POLL = TIMING.pollMs!;
// Scheduling and I/O on a shared 2-vCPU machine: generous, still far below a second lease.
const SLACK_MS = 1500;

/** A store a test can cut off as if its process died: every later call hangs until released. */
class SeverableStore implements LeaseStore {
  private cut = false;
  private released = false;
  private readonly parked: Array<() => void> = [];

  constructor(private readonly inner: LeaseStore) {}

  sever(): void {
    this.cut = true;
  }

  /** Fails every parked and future call (test cleanup). */
  release(): void {
    this.released = true;
    for (const reject of this.parked.splice(0)) reject();
  }

  get(key: string): ReturnType<LeaseStore['get']> {
    return this.cut ? this.park() : this.inner.get(key);
  }

  putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    return this.cut ? this.park() : this.inner.putIfAbsent(key, body);
  }

  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    return this.cut ? this.park() : this.inner.putIfMatch(key, body, etag);
  }

  private park(): Promise<never> {
    if (this.released) return Promise.reject(new Error('process is gone'));
    return new Promise<never>((_resolve, reject) =>
      this.parked.push(() => reject(new Error('process is gone'))),
    );
  }
}

/** Three in-process electors on one real bucket, with real clocks and shortened timings. */
/** A real bucket for three electors: a store per node, a reader for assertions, cleanup. */
interface TestBucket {
  store: () => LeaseStore;
  read: (key: string) => Promise<string>;
  cleanup: () => Promise<void>;
}

function describeThreeElectors(name: string, open: () => Promise<TestBucket>): void {
  describe(name, () => {
    let bucket: TestBucket;
    let running: Array<{
      id: string;
      elector: Elector;
      store: SeverableStore;
      stop: AbortController;
      done: Promise<void>;
      log: RecordingLog;
    }>;
    let overlaps: number;
    let sampler: NodeJS.Timeout | undefined;

    beforeAll(async () => {
      bucket = await open();
    }, 180_000);

    afterAll(async () => {
      await bucket?.cleanup();
    });

    beforeEach(() => {
      running = [];
      overlaps = 0;
    });

    afterEach(async () => {
      if (sampler !== undefined) clearInterval(sampler);
      for (const r of running) {
        r.stop.abort();
        r.store.release();
      }
      await Promise.all(running.map((r) => r.done));
    });

    function startThree(key: string): void {
      for (const id of ['n1', 'n2', 'n3']) {
        const store = new SeverableStore(bucket.store());
        const log = new RecordingLog();
        const elector = systemElector(store, log, {
          id,
          addr: `[2600::${id.slice(1)}]:8081`,
          key,
          timing: TIMING,
        });
        const stop = new AbortController();
        running.push({ id, elector, store, stop, done: elector.run(stop.signal), log });
      }
      // Sample continuously: two nodes must never both believe they lead.
      sampler = setInterval(() => {
        if (running.filter((r) => r.elector.isLeader()).length > 1) overlaps++;
      }, 10);
    }

    const leaders = () => running.filter((r) => r.elector.isLeader());
    const oneLeader = (except?: string) => {
      const now = leaders();
      return now.length === 1 && now[0]!.id !== except ? now[0] : undefined;
    };

    it('elects exactly one leader, and another within lease + poll after the leader dies', async () => {
      const key = `election/${Date.now()}-kill/leader.json`;
      startThree(key);
      const first = await waitFor(() => oneLeader(), 'a first leader', 10_000, 10);
      await new Promise((r) => setTimeout(r, 4 * POLL));
      expect(leaders().map((r) => r.id)).toEqual([first.id]);
      expect(parseLeaderRecord(await bucket.read(key)).leaderID).toBe(first.id);
      for (const r of running.filter((x) => x !== first)) {
        expect(r.elector.leader()?.id).toBe(first.id);
      }

      const killedAt = performance.now();
      first.store.sever(); // no resign, no more writes: as SIGKILL
      const second = await waitFor(() => oneLeader(first.id), 'a new leader', LEASE * 3, 10);
      const failoverMs = performance.now() - killedAt;
      expect(failoverMs).toBeGreaterThan(LEASE - POLL - TIMING.renewMarginMs!);
      expect(failoverMs).toBeLessThanOrEqual(LEASE + POLL + SLACK_MS);
      expect(first.elector.isLeader()).toBe(false);
      expect(first.log.messages()).toContain('stop leader duties');
      expect(parseLeaderRecord(await bucket.read(key)).leaderID).toBe(second.id);
      expect(overlaps).toBe(0);
    }, 60_000);

    it('hands over at the next round when the leader resigns', async () => {
      const key = `election/${Date.now()}-resign/leader.json`;
      startThree(key);
      const first = await waitFor(() => oneLeader(), 'a first leader', 10_000, 10);
      const resignedAt = performance.now();
      first.stop.abort();
      await first.done;
      expect(isResigned(parseLeaderRecord(await bucket.read(key)))).toBe(true);
      const second = await waitFor(() => oneLeader(first.id), 'a new leader', LEASE * 2, 10);
      expect(performance.now() - resignedAt).toBeLessThan(POLL + SLACK_MS);
      expect(second.id).not.toBe(first.id);
      expect(first.log.messages()).toEqual(
        expect.arrayContaining(['stop leader duties', 'resign leadership']),
      );
      expect(overlaps).toBe(0);
    }, 60_000);
  });
}

describeThreeElectors('three electors on a local directory bucket', async () => {
  const dir = await makeTempDir('podmin-election-local');
  const store = new LocalDirectoryObjectStore(dir.path);
  return {
    store: () => new LocalDirectoryObjectStore(dir.path),
    read: async (key) => (await store.get(key)).body.toString('utf8'),
    cleanup: dir.cleanup,
  };
});

describeThreeElectors('three electors on the S3 emulator', async () => {
  const { client, bucket } = await emulatorBucket('election', createS3Client);
  const store = new S3ObjectStore({ client, bucket });
  return {
    store: () => store,
    read: async (key) => (await store.get(key)).body.toString('utf8'),
    cleanup: () => Promise.resolve(client.destroy()),
  };
});

/** A child process running one elector, with its JSON log lines as they arrive. */
interface Child {
  id: string;
  process: ChildProcess;
  lines: Array<{ atMs: number; line: Record<string, unknown> }>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe('electors in separate processes', () => {
  let work: TempDir;
  let bundle: string;
  let children: Child[] = [];

  beforeAll(async () => {
    work = await makeTempDir('podmin-election-processes');
    bundle = path.join(work.path, 'elector-child.cjs');
    bundleForNode(path.join(__dirname, '..', '__fixtures__', 'elector-child.ts'), bundle);
  }, 120_000);

  afterEach(async () => {
    for (const child of children) {
      if (child.process.exitCode === null && child.process.signalCode === null) {
        child.process.kill('SIGCONT');
        child.process.kill('SIGKILL');
      }
    }
    await Promise.all(children.map((c) => c.exit));
    children = [];
  });

  afterAll(async () => {
    await work?.cleanup();
  });

  function startChild(bucketDir: string, id: string): Child {
    const proc = spawn(
      process.execPath,
      [bundle, bucketDir, id, String(LEASE), String(POLL), String(TIMING.renewMarginMs)],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const child: Child = {
      id,
      process: proc,
      lines: [],
      exit: new Promise((resolve) =>
        proc.once('exit', (code, signal) => resolve({ code, signal })),
      ),
    };
    let pending = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const part of parts) {
        if (part.trim() === '') continue;
        child.lines.push({
          atMs: performance.now(),
          line: JSON.parse(part) as Record<string, unknown>,
        });
      }
    });
    children.push(child);
    return child;
  }

  const said = (child: Child, msg: string, after = -Infinity) =>
    child.lines.filter((l) => l.line['msg'] === msg && l.atMs > after);

  /** The one child that logged "become leader" after `after` and is not excluded. */
  const newLeader = (after: number, excluded: Child[]) => {
    const found = children.filter(
      (c) => !excluded.includes(c) && said(c, 'become leader', after).length > 0,
    );
    return found.length === 1 ? found[0] : undefined;
  };

  it('fails over after SIGKILL, and a SIGSTOPped leader stops its duties when it resumes', async () => {
    const bucketDir = path.join(work.path, 'bucket');
    await mkdir(bucketDir);
    for (const id of ['p1', 'p2', 'p3']) startChild(bucketDir, id);
    const first = await waitFor(() => newLeader(-Infinity, []), 'a first leader', 15_000, 20);

    const killedAt = performance.now();
    first.process.kill('SIGKILL');
    const second = await waitFor(
      () => newLeader(killedAt, [first]),
      'a leader after SIGKILL',
      3 * LEASE,
      20,
    );
    const failoverMs = said(second, 'become leader', killedAt)[0]!.atMs - killedAt;
    expect(failoverMs).toBeLessThanOrEqual(LEASE + POLL + SLACK_MS);
    expect((await first.exit).signal).toBe('SIGKILL');

    const stoppedAt = performance.now();
    second.process.kill('SIGSTOP');
    const third = await waitFor(
      () => newLeader(stoppedAt, [first, second]),
      'a leader after SIGSTOP',
      3 * LEASE,
      20,
    );
    expect(said(third, 'become leader', stoppedAt)[0]!.atMs - stoppedAt).toBeGreaterThanOrEqual(
      LEASE - POLL - TIMING.renewMarginMs!,
    );
    // Stay stopped well past the lease, then resume.
    await new Promise((r) => setTimeout(r, LEASE));
    const resumedAt = performance.now();
    second.process.kill('SIGCONT');
    const stopLine = await waitFor(
      () => said(second, 'stop leader duties', resumedAt)[0],
      'the resumed leader to stop its duties',
      3 * POLL + SLACK_MS,
      20,
    );
    expect(stopLine.line).toMatchObject({ elector: second.id, reason: 'renew-deadline' });
    expect(stopLine.line['overdueMs']).toEqual(expect.any(Number));
    expect(stopLine.line['overdueMs']).toBeGreaterThan(0);
    // It follows the new leader and never leads again while that one lives.
    await waitFor(
      () =>
        second.lines.find(
          (l) =>
            l.atMs > resumedAt &&
            l.line['msg'] === 'leader changed' &&
            l.line['leader'] === third.id,
        ),
      'the resumed node to follow the new leader',
      3 * POLL + SLACK_MS,
      20,
    );
    await new Promise((r) => setTimeout(r, 4 * POLL));
    expect(said(second, 'become leader', resumedAt)).toEqual([]);
    expect(said(third, 'stop leader duties')).toEqual([]);

    // SIGTERM: the leader resigns and every process exits 0.
    third.process.kill('SIGTERM');
    second.process.kill('SIGTERM');
    expect(await third.exit).toEqual({ code: 0, signal: null });
    expect(await second.exit).toEqual({ code: 0, signal: null });
    expect(said(third, 'resign leadership')).toHaveLength(1);
    expect(said(second, 'resign leadership')).toEqual([]);
  }, 90_000);
});
