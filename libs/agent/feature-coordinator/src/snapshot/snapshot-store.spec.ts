import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { InMemoryObjectStore, makeTempDir } from '@podmin/testing';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  describeSnapshotFencing,
  leaderToken,
  snapshotWith,
} from '../__fixtures__/snapshot-fencing';
import { encodeSnapshot } from './snapshot-codec';
import { SnapshotCorruptError } from './snapshot-error';
import {
  SNAPSHOT_KEY,
  readSnapshot,
  restoreIdentities,
  snapshotVersionOf,
  writeSnapshot,
} from './snapshot-store';

describeSnapshotFencing('snapshot fencing on an in-memory fake bucket', () => {
  const store = new InMemoryObjectStore();
  return Promise.resolve({ open: () => store, cleanup: () => Promise.resolve() });
});

describeSnapshotFencing('snapshot fencing on a local directory bucket', async () => {
  const dir = await makeTempDir('podmin-snapshot-local');
  // A fresh adapter per leader, as two processes would have.
  return { open: () => new LocalDirectoryObjectStore(dir.path), cleanup: dir.cleanup };
});

describe('snapshot store', () => {
  it('reports a corrupt object with its ETag, and a leader can replace it', async () => {
    const store = new InMemoryObjectStore();
    const etag = store.store(SNAPSHOT_KEY, Buffer.from([0x0a, 0xff, 0xff]));
    let caught: unknown;
    try {
      await readSnapshot(store);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SnapshotCorruptError);
    expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    expect((caught as SnapshotCorruptError).etag).toBe(etag);
    expect((caught as Error).message).toMatch(/^reading dns\/services\.pb \(ETag .*\): decoding/);

    const { token } = leaderToken();
    const result = await writeSnapshot(
      store,
      snapshotWith('1'),
      { etag: (caught as SnapshotCorruptError).etag, generation: 0 },
      token,
    );
    expect(result.status === 'written' && result.snapshot.generation).toBe(1);
    expect((await readSnapshot(store))?.snapshot.generation).toBe(1);
  });

  it('checks VIPs against the cluster when asked', async () => {
    const store = new InMemoryObjectStore();
    store.store(SNAPSHOT_KEY, encodeSnapshot({ ...snapshotWith('1'), generation: 1 }));
    expect((await readSnapshot(store, { cluster: 'prod' }))?.snapshot.services).toHaveLength(1);
    await expect(readSnapshot(store, { cluster: 'other' })).rejects.toThrow(/cluster other/);
  });

  it('treats a 412 answering its own landed write (an SDK retry) as written', async () => {
    const store = new InMemoryObjectStore();
    const { token } = leaderToken();
    const inner = store.putIfAbsent.bind(store);
    store.putIfAbsent = async (key, body) => {
      await inner(key, body);
      throw new PodminError('PRECONDITION_FAILED', `creating ${key}: exists`);
    };
    const result = await writeSnapshot(store, snapshotWith('1'), undefined, token);
    expect(result.status).toBe('written');
    expect(result.etag).toBe(store.objects.get(SNAPSHOT_KEY)?.etag);
  });

  it('passes a 409 on as CONFLICT for the caller to retry', async () => {
    const store = new InMemoryObjectStore();
    const { token } = leaderToken();
    store.putIfAbsent = () =>
      Promise.reject(new PodminError('CONFLICT', 'creating: ConditionalRequestConflict'));
    await expect(writeSnapshot(store, snapshotWith('1'), undefined, token)).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/^writing dns\/services\.pb generation 1 .*retry/) as unknown,
    });
  });

  it('does not touch the bucket for an unchanged revision', async () => {
    const store = new InMemoryObjectStore();
    const { token } = leaderToken();
    await writeSnapshot(store, snapshotWith('1'), undefined, token);
    const read = await readSnapshot(store);
    const calls = store.calls.length;
    const result = await writeSnapshot(store, snapshotWith('1'), snapshotVersionOf(read), token);
    expect(result.status).toBe('unchanged');
    expect(store.calls.length).toBe(calls);
  });

  it('restores identities without backends', () => {
    const restored = restoreIdentities({ ...snapshotWith('1', '2'), generation: 5 });
    const original = snapshotWith('1', '2').services[0];
    expect(original?.backends).toHaveLength(2);
    expect(restored).toEqual([{ ...original, backends: [] }]);
  });
});
