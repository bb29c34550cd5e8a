// The behaviour every ObjectStore adapter must share, run by each adapter's integration spec
// against a real backend. Not exported from index.ts: it needs jest's globals.
import { randomBytes } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode } from '@podmin/util-errors';
import { md5Etag } from './etag';
import type { ByteRange, ObjectBody, ObjectStore } from './object-store.port';

/** A store under test and how to dispose of it. */
export interface ObjectStoreFixture {
  store: ObjectStore;
  cleanup: () => Promise<void>;
}

/** First-call setup can install the emulator from the package registry. */
const SETUP_TIMEOUT_MS = 180_000;

/** Registers the shared ObjectStore contract tests for one adapter. */
export function describeObjectStoreContract(
  name: string,
  makeStore: () => Promise<ObjectStoreFixture>,
): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fixture: ObjectStoreFixture | undefined;
    const store = (): ObjectStore => {
      if (fixture === undefined) {
        throw new Error('store fixture not ready');
      }
      return fixture.store;
    };

    beforeAll(async () => {
      fixture = await makeStore();
    }, SETUP_TIMEOUT_MS);

    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('reports a missing object as OBJECT_NOT_FOUND from get, getIfChanged and head', async () => {
      await expectCode(store().get('missing/object.json'), 'OBJECT_NOT_FOUND');
      await expectCode(store().getIfChanged('missing/object.json', '"abc"'), 'OBJECT_NOT_FOUND');
      await expectCode(store().head('missing/object.json'), 'OBJECT_NOT_FOUND');
    });

    it('rejects invalid keys with INVALID_ARGUMENT', async () => {
      for (const key of ['', '/abs', 'a//b', 'a/../b', 'trailing/']) {
        await expectCode(store().get(key), 'INVALID_ARGUMENT');
        await expectCode(store().putIfAbsent(key, 'x'), 'INVALID_ARGUMENT');
      }
    });

    it('creates once with putIfAbsent and keeps the original on a second attempt', async () => {
      const key = 'create/deployments/index.json';
      const etag = await store().putIfAbsent(key, '{"v":1}');
      expect(etag).toBe(md5Etag('{"v":1}'));
      await expectCode(store().putIfAbsent(key, '{"v":2}'), 'PRECONDITION_FAILED');
      const current = await store().get(key);
      expect(current.body.toString('utf8')).toBe('{"v":1}');
      expect(current.etag).toBe(etag);
    });

    it('replaces with putIfMatch only when the ETag matches', async () => {
      const key = 'cas/index.json';
      const first = await store().putIfAbsent(key, 'one');
      const second = await store().putIfMatch(key, 'two', first);
      expect(second).toBe(md5Etag('two'));
      expect((await store().get(key)).body.toString()).toBe('two');

      await expectCode(store().putIfMatch(key, 'three', first), 'PRECONDITION_FAILED');
      expect((await store().get(key)).body.toString()).toBe('two');

      await expectCode(store().putIfMatch('cas/absent.json', 'x', second), 'PRECONDITION_FAILED');
      await expectCode(store().get('cas/absent.json'), 'OBJECT_NOT_FOUND');
    });

    it('writes unconditionally with put', async () => {
      const key = 'put/value.txt';
      expect(await store().put(key, 'a')).toBe(md5Etag('a'));
      expect(await store().put(key, 'b')).toBe(md5Etag('b'));
      expect((await store().get(key)).body.toString()).toBe('b');
    });

    it('answers getIfChanged with unchanged or the new content', async () => {
      const key = 'conditional/index.json';
      const etag = await store().putIfAbsent(key, 'v1');
      expect(await store().getIfChanged(key, etag)).toEqual({ status: 'unchanged', etag });

      const next = await store().putIfMatch(key, 'v2', etag);
      const changed = await store().getIfChanged(key, etag);
      expect(changed.status).toBe('changed');
      if (changed.status === 'changed') {
        expect(changed.body.toString()).toBe('v2');
        expect(changed.etag).toBe(next);
      }
    });

    it('reports size, ETag and modification time with head', async () => {
      const key = 'head/blob.bin';
      const body = randomBytes(1234);
      const before = Date.now();
      const etag = await store().put(key, body);
      const head = await store().head(key);
      expect(head.size).toBe(1234);
      expect(head.etag).toBe(etag);
      expect(head.lastModified).toBeInstanceOf(Date);
      // Second-granular backends round down; allow a little clock skew.
      expect(head.lastModified.getTime()).toBeGreaterThan(before - 5000);
    });

    it('deletes idempotently', async () => {
      const key = 'delete/me.txt';
      await store().put(key, 'x');
      await store().delete(key);
      await expectCode(store().get(key), 'OBJECT_NOT_FOUND');
      await expect(store().delete(key)).resolves.toBeUndefined();
      await expect(store().delete('delete/never-existed.txt')).resolves.toBeUndefined();
      expect((await store().list('delete/')).objects).toEqual([]);
    });

    it('lists in UTF-8 byte order and filters by prefix', async () => {
      const keys = [
        'order/a-c',
        'order/a/b',
        'order/a/c/d',
        'order/a0',
        'order/B',
        'order/z',
        'order/é',
        'order/~',
      ];
      for (const key of [...keys, 'orderx/1', 'ord']) {
        await store().put(key, key);
      }
      const byteOrder = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      const all = await store().list('order/');
      expect(all.objects.map((o) => o.key)).toEqual(byteOrder);
      expect(all.nextToken).toBeUndefined();
      const first = all.objects.find((o) => o.key === 'order/a/b');
      expect(first).toMatchObject({ size: 'order/a/b'.length, etag: md5Etag('order/a/b') });

      expect((await store().list('order/a')).objects.map((o) => o.key)).toEqual([
        'order/a-c',
        'order/a/b',
        'order/a/c/d',
        'order/a0',
      ]);
      expect((await store().list('order/a/')).objects.map((o) => o.key)).toEqual([
        'order/a/b',
        'order/a/c/d',
      ]);
      expect((await store().list('nothing-here/')).objects).toEqual([]);
    });

    it('paginates listings of more than 1000 keys', async () => {
      const keys = Array.from({ length: 1005 }, (_, i) => `page/k${String(i).padStart(4, '0')}`);
      await runBounded(keys, 16, (key) => store().put(key, '.'));
      const first = await store().list('page/');
      expect(first.objects).toHaveLength(1000);
      expect(first.nextToken).toBeDefined();
      const second = await store().list('page/', first.nextToken);
      expect(second.nextToken).toBeUndefined();
      expect([...first.objects, ...second.objects].map((o) => o.key)).toEqual(keys);
    }, 120_000);

    it('bounds reads with maxBytes', async () => {
      const key = 'bounded/hundred.bin';
      const body = Buffer.alloc(100, 7);
      const etag = await store().put(key, body);
      await expectCode(store().get(key, { maxBytes: 99 }), 'OBJECT_TOO_LARGE');
      expect((await store().get(key, { maxBytes: 100 })).body).toEqual(body);
      await expectCode(store().getIfChanged(key, '"0"', { maxBytes: 10 }), 'OBJECT_TOO_LARGE');
      expect(await store().getIfChanged(key, etag, { maxBytes: 10 })).toEqual({
        status: 'unchanged',
        etag,
      });
    });

    it('cancels reads through an abort signal with its reason', async () => {
      const key = 'cancel/object.json';
      const etag = await store().put(key, '{"v":1}');
      const reason = new PodminError('SERVICE_UNAVAILABLE', 'reading: pass deadline exceeded');
      const aborted = new AbortController();
      aborted.abort(reason);
      await expect(store().get(key, { signal: aborted.signal })).rejects.toBe(reason);
      await expect(store().getIfChanged(key, '"0"', { signal: aborted.signal })).rejects.toBe(
        reason,
      );
      const live = new AbortController();
      expect((await store().get(key, { signal: live.signal })).etag).toBe(etag);
      expect(await store().getIfChanged(key, etag, { signal: live.signal })).toEqual({
        status: 'unchanged',
        etag,
      });
    });

    it('round-trips binary content exactly', async () => {
      const body = Buffer.concat([
        Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
        randomBytes(64 * 1024),
      ]);
      const etag = await store().putIfAbsent('binary/blob', body);
      const read = await store().get('binary/blob');
      expect(read.body.equals(body)).toBe(true);
      expect(read.etag).toBe(etag);
      expect(etag).toBe(md5Etag(body));
      expect((await store().head('binary/blob')).etag).toBe(etag);
    });

    it('streams a whole object into caller-owned buffers with the ETag head reports', async () => {
      const key = 'stream/whole.bin';
      const body = randomBytes(3 * 1024 * 1024 + 17);
      const etag = await store().put(key, body);
      const opened = await store().openRead(key);
      if (opened.kind !== 'opened')
        throw new Error(`expected an opened object, got ${opened.kind}`);
      expect([opened.size, opened.start, opened.end]).toEqual([body.length, 0, body.length - 1]);
      expect(opened.etag).toBe(etag);
      expect(opened.etag).toBe((await store().head(key)).etag);
      expect(opened.etag).toBe((await store().get(key)).etag);
      const { bytes, counts } = await drain(opened.body, 1024 * 1024);
      expect(bytes.equals(body)).toBe(true);
      // Every read fills the buffer except the last one before the end.
      expect(counts).toEqual([1024 * 1024, 1024 * 1024, 1024 * 1024, 17, 0]);
      await opened.body.close();
    });

    it("streams ranges, clamped to the object, with the whole object's size and ETag", async () => {
      const key = 'stream/ranged.bin';
      const body = randomBytes(1000);
      const etag = await store().put(key, body);
      const cases: Array<[ByteRange, number, number]> = [
        [{ start: 5, end: 24 }, 5, 24],
        [{ start: 990 }, 990, 999],
        [{ start: 0, end: 5000 }, 0, 999],
        [{ start: 999, end: 999 }, 999, 999],
        [{ suffix: 10 }, 990, 999],
        [{ suffix: 5000 }, 0, 999],
      ];
      for (const [range, start, end] of cases) {
        const opened = await store().openRead(key, { range });
        expect(opened).toMatchObject({ kind: 'opened', size: 1000, start, end, etag });
        if (opened.kind !== 'opened') continue;
        const { bytes } = await drain(opened.body, 7);
        expect(bytes.equals(body.subarray(start, end + 1))).toBe(true);
      }
    });

    it('reports a range outside the object as unsatisfiable, with the object size', async () => {
      const key = 'stream/short.bin';
      await store().put(key, 'ten bytes!');
      for (const range of [{ start: 10 }, { start: 50, end: 60 }, { suffix: 0 }]) {
        expect(await store().openRead(key, { range })).toEqual({ kind: 'unsatisfiable', size: 10 });
      }
      await store().put('stream/empty', '');
      const empty = await store().openRead('stream/empty');
      expect(empty).toMatchObject({
        kind: 'opened',
        size: 0,
        start: 0,
        end: -1,
        etag: md5Etag(''),
      });
      if (empty.kind === 'opened') {
        expect(await empty.body.read(new Uint8Array(8))).toBe(0);
        await empty.body.close();
      }
      expect(await store().openRead('stream/empty', { range: { start: 0 } })).toEqual({
        kind: 'unsatisfiable',
        size: 0,
      });
    });

    it('refuses missing objects, bad keys and malformed ranges on openRead', async () => {
      await expectCode(store().openRead('stream/missing'), 'OBJECT_NOT_FOUND');
      await expectCode(store().openRead('a//b'), 'INVALID_ARGUMENT');
      await store().put('stream/any', 'x');
      for (const range of [{ start: -1 }, { start: 4, end: 2 }, { suffix: 1.5 }]) {
        await expectCode(store().openRead('stream/any', { range }), 'INVALID_ARGUMENT');
      }
    });

    it('releases an opened object on close, twice safely, before reading it to the end', async () => {
      await store().put('stream/closed', Buffer.alloc(64 * 1024, 1));
      const opened = await store().openRead('stream/closed');
      if (opened.kind !== 'opened') throw new Error('expected an opened object');
      expect(await opened.body.read(new Uint8Array(10))).toBe(10);
      await opened.body.close();
      await expect(opened.body.close()).resolves.toBeUndefined();
    });

    it('never loses an update when read-modify-write loops race with putIfMatch', async () => {
      const key = 'race/counter.json';
      await store().putIfAbsent(key, JSON.stringify({ n: 0 }));
      const workers = 8;
      const incrementsEach = 5;
      await Promise.all(
        Array.from({ length: workers }, () => incrementCounter(store(), key, incrementsEach)),
      );
      const final = JSON.parse((await store().get(key)).body.toString()) as { n: number };
      expect(final.n).toBe(workers * incrementsEach);
    }, 120_000);
  });
}

/** Adds `times` to the JSON counter at `key` by compare-and-swap; returns how many retries it took. */
export async function incrementCounter(
  store: ObjectStore,
  key: string,
  times: number,
): Promise<number> {
  let conflicts = 0;
  for (let done = 0; done < times;) {
    const current = await store.get(key);
    const value = JSON.parse(current.body.toString()) as { n: number };
    try {
      await store.putIfMatch(key, JSON.stringify({ n: value.n + 1 }), current.etag);
      done++;
    } catch (err) {
      if (!(err instanceof PodminError && err.code === 'PRECONDITION_FAILED')) {
        throw err;
      }
      conflicts++;
    }
  }
  return conflicts;
}

/** Asserts that `promise` rejects with a PodminError of `code`. */
export async function expectCode(promise: Promise<unknown>, code: PodminErrorCode): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
  await expect(promise).rejects.toBeInstanceOf(PodminError);
}

/** Reads `body` to its end through one reused buffer of `size` bytes; returns bytes and read counts. */
async function drain(body: ObjectBody, size: number): Promise<{ bytes: Buffer; counts: number[] }> {
  const into = new Uint8Array(size);
  const parts: Buffer[] = [];
  const counts: number[] = [];
  for (;;) {
    const n = await body.read(into);
    counts.push(n);
    if (n === 0) break;
    parts.push(Buffer.from(into.subarray(0, n)));
  }
  await body.close();
  return { bytes: Buffer.concat(parts), counts };
}

async function runBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
