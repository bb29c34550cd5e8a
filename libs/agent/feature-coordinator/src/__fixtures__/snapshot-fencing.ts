import { hasCode } from '@podmin/util-errors';
import { DutyGate, type DutyToken } from '../election/duty-gate';
import type { LeadershipSource } from '../election/election.ports';
import { computeSnapshot } from '../snapshot/compute-snapshot';
import { encodeSnapshot, type ServiceSnapshot } from '../snapshot/snapshot-codec';
import {
  SNAPSHOT_KEY,
  readSnapshot,
  snapshotVersionOf,
  writeSnapshot,
} from '../snapshot/snapshot-store';
import type { SnapshotStore } from '../snapshot/snapshot.ports';
import { nodeReport, servicePayload } from './snapshot-fixtures';

/** A leadership source a test switches by hand: one term, held while `leading`. */
export class ManualLeadership implements LeadershipSource {
  leading = true;
  private readonly controller = new AbortController();

  currentTerm(): { term: number; signal: AbortSignal } | undefined {
    return this.leading ? { term: 1, signal: this.controller.signal } : undefined;
  }

  holds(term: number): boolean {
    return this.leading && term === 1;
  }
}

/** A valid duty token and the switch that deposes it. */
export function leaderToken(): { token: DutyToken; leadership: ManualLeadership } {
  const leadership = new ManualLeadership();
  const token = new DutyGate(leadership).current();
  if (token === undefined) throw new Error('the manual leadership does not lead');
  return { token, leadership };
}

/** A snapshot whose content differs by `hosts` (backends of shop/web on node 1). */
export function snapshotWith(...hosts: string[]): ServiceSnapshot {
  return computeSnapshot({
    cluster: 'prod',
    services: [servicePayload('shop', 'web', { app: 'web' })],
    nodes: [
      nodeReport(
        1,
        hosts.map((host) => ({ namespace: 'shop', labels: { app: 'web' }, host })),
      ),
    ],
  }).snapshot;
}

/**
 * The fencing contract of `dns/services.pb`, run against any store: `open()` gives a fresh
 * client of one shared, empty bucket per call (two leaders are two clients).
 */
export function describeSnapshotFencing(
  name: string,
  setup: () => Promise<{ open: () => SnapshotStore; cleanup: () => Promise<void> }>,
): void {
  describe(name, () => {
    let open: () => SnapshotStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ open, cleanup } = await setup());
    });
    afterEach(async () => {
      await cleanup();
    });

    it('creates generation 1, then refuses the leader holding a stale ETag', async () => {
      const a = open();
      const b = open();
      const { token } = leaderToken();
      expect(await readSnapshot(a)).toBeUndefined();
      const first = await writeSnapshot(a, snapshotWith('1'), undefined, token);
      expect(first.status).toBe('written');

      // Both leaders (the old one has not noticed it was superseded) read generation 1.
      const seenByA = await readSnapshot(a);
      const seenByB = await readSnapshot(b);
      expect(seenByA?.snapshot.generation).toBe(1);
      expect(seenByB?.etag).toBe(seenByA?.etag);

      const byB = await writeSnapshot(b, snapshotWith('1', '2'), snapshotVersionOf(seenByB), token);
      expect(byB.status === 'written' && byB.snapshot.generation).toBe(2);

      let refused: unknown;
      try {
        await writeSnapshot(a, snapshotWith('3'), snapshotVersionOf(seenByA), token);
      } catch (err) {
        refused = err;
      }
      expect(hasCode(refused, 'PRECONDITION_FAILED')).toBe(true);
      expect((refused as Error).message).toMatch(
        /writing dns\/services\.pb generation 2 .*no longer at ETag .*superseded/,
      );

      const stored = await readSnapshot(open());
      expect(stored?.snapshot).toEqual({ ...snapshotWith('1', '2'), generation: 2 });
    });

    it('increments the generation on every change and skips an unchanged revision', async () => {
      const store = open();
      const { token } = leaderToken();
      await writeSnapshot(store, snapshotWith('1'), undefined, token);
      for (const [hosts, generation] of [
        [['1', '2'], 2],
        [['2'], 3],
        [['2', '3'], 4],
      ] as const) {
        const read = await readSnapshot(store);
        const result = await writeSnapshot(
          store,
          snapshotWith(...hosts),
          snapshotVersionOf(read),
          token,
        );
        expect(result.status === 'written' && result.snapshot.generation).toBe(generation);
      }
      const read = await readSnapshot(store);
      const same = await writeSnapshot(
        store,
        snapshotWith('3', '2'),
        snapshotVersionOf(read),
        token,
      );
      expect(same).toEqual({ status: 'unchanged', etag: read?.etag });
      expect((await readSnapshot(store))?.etag).toBe(read?.etag);
      expect((await readSnapshot(store))?.snapshot.generation).toBe(4);
    });

    it('lets only one of two leaders create the first snapshot', async () => {
      const { token } = leaderToken();
      const results = await Promise.allSettled([
        writeSnapshot(open(), snapshotWith('1'), undefined, token),
        writeSnapshot(open(), snapshotWith('2'), undefined, token),
      ]);
      const written = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter(
        (r) => r.status === 'rejected' && hasCode(r.reason, 'PRECONDITION_FAILED'),
      );
      expect([written.length, refused.length]).toEqual([1, 1]);
      expect((await readSnapshot(open()))?.snapshot.generation).toBe(1);
    });

    it('does not write once the duty token is no longer valid', async () => {
      const store = open();
      const { token, leadership } = leaderToken();
      await writeSnapshot(store, snapshotWith('1'), undefined, token);
      const read = await readSnapshot(store);
      leadership.leading = false;
      await expect(
        writeSnapshot(store, snapshotWith('2'), snapshotVersionOf(read), token),
      ).rejects.toThrow(/writing dns\/services\.pb generation 2 .*no longer the leader/);
      expect((await readSnapshot(store))?.etag).toBe(read?.etag);
    });

    it('stores exactly the canonical bytes under dns/services.pb', async () => {
      const store = open();
      const { token } = leaderToken();
      const result = await writeSnapshot(store, snapshotWith('1'), undefined, token);
      const { body } = await store.get(SNAPSHOT_KEY);
      expect(result.status).toBe('written');
      expect(body.equals(encodeSnapshot({ ...snapshotWith('1'), generation: 1 }))).toBe(true);
    });
  });
}
