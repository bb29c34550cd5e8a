import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { podPayloadKey, sha512Hex } from '@podmin/util-desired-state';
import type { ReadOptions, StoredObject } from './desired-state.port';
import { DirectoryPayloadCache } from './directory-payload-cache';
import { readPayloads, type PayloadCache, type PayloadRead } from './payload-reader';

/** Map-backed `get` that records each read and the most reads ever in flight at once. */
class CountingStore {
  readonly objects = new Map<string, Buffer>();
  readonly reads: string[] = [];
  inFlight = 0;
  maxInFlight = 0;

  async get(key: string, options?: ReadOptions): Promise<StoredObject> {
    this.reads.push(key);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      const body = this.objects.get(key);
      if (!body) throw new PodminError('OBJECT_NOT_FOUND', `${key}: absent`);
      if (options?.maxBytes !== undefined && body.length > options.maxBytes)
        throw new PodminError('OBJECT_TOO_LARGE', `${key}: too large`);
      return { body: Buffer.from(body), etag: '"e"' };
    } finally {
      this.inFlight--;
    }
  }
}

/** A PayloadCache in a map that records every put. */
class MapCache implements PayloadCache {
  readonly entries = new Map<string, Buffer>();
  readonly puts: string[] = [];
  get(digest: string): Promise<Buffer | undefined> {
    return Promise.resolve(this.entries.get(digest));
  }
  put(digest: string, body: Buffer): Promise<void> {
    this.puts.push(digest);
    this.entries.set(digest, body);
    return Promise.resolve();
  }
}

const pod = (name: string): string => `metadata:\n  name: ${name}\n`;
const bodyOf = (read: PayloadRead | undefined): string =>
  read?.ok ? read.body.toString('utf8') : `error: ${String((read as { error: Error }).error)}`;

describe('readPayloads', () => {
  it('reads each digest once with bounded concurrency, then serves it from the cache', async () => {
    const store = new CountingStore();
    const keys: string[] = [];
    for (let app = 0; app < 40; app++) {
      // One Pod in three NodeGroups: three paths, one digest.
      for (const group of ['a', 'b', 'c']) {
        const key = podPayloadKey(group, pod(`app-${app}`));
        store.objects.set(key, Buffer.from(pod(`app-${app}`)));
        keys.push(key, key);
      }
    }
    const cache = new MapCache();
    const cold = await readPayloads(store, keys, { cache, concurrency: 4 });
    expect(store.reads).toHaveLength(40);
    expect(store.maxInFlight).toBe(4);
    expect(cache.puts).toHaveLength(40);
    expect(new Set(keys).size).toBe(120);
    expect(cold.size).toBe(120);
    expect(bodyOf(cold.get(podPayloadKey('c', pod('app-7'))))).toBe(pod('app-7'));

    store.reads.length = 0;
    const warm = await readPayloads(store, keys, { cache });
    expect(store.reads).toEqual([]);
    expect(bodyOf(warm.get(podPayloadKey('b', pod('app-39'))))).toBe(pod('app-39'));
  });

  it('keeps its reads in flight while cache writes are slow, and waits for the writes', async () => {
    const store = new CountingStore();
    const keys = Array.from({ length: 8 }, (_, i) => podPayloadKey('a', pod(`app-${i}`)));
    keys.forEach((key, i) => store.objects.set(key, Buffer.from(pod(`app-${i}`))));
    // A cache whose writes finish only when released, and one that refuses to keep anything.
    const cache = new MapCache();
    const release: Array<() => void> = [];
    cache.put = (digest, body) =>
      new Promise<void>((resolve) => release.push(resolve)).then(() => {
        cache.entries.set(digest, body);
      });
    let done = false;
    const reading = readPayloads(store, keys, { cache, concurrency: 2 }).then((reads) => {
      done = true;
      return reads;
    });
    while (store.reads.length < keys.length) await new Promise((r) => setTimeout(r, 1));
    expect(store.maxInFlight).toBe(2);
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    release.forEach((r) => r());
    const reads = await reading;
    expect(cache.entries.size).toBe(8);
    expect(bodyOf(reads.get(keys[5] ?? ''))).toBe(pod('app-5'));

    const failing = new MapCache();
    failing.put = () => Promise.reject(new Error('disk full'));
    const again = await readPayloads(store, keys, { cache: failing });
    expect(bodyOf(again.get(keys[0] ?? ''))).toBe(pod('app-0'));
  });

  it('never caches or returns a tampered payload, and tries the next path of its digest', async () => {
    const store = new CountingStore();
    const [a, b] = [podPayloadKey('a', pod('web')), podPayloadKey('b', pod('web'))];
    store.objects.set(a, Buffer.from('metadata:\n  name: evil\n'));
    store.objects.set(b, Buffer.from(pod('web')));
    const lone = podPayloadKey('a', pod('db'));
    store.objects.set(lone, Buffer.from('metadata:\n  name: evil-db\n'));
    const cache = new MapCache();
    const reads = await readPayloads(store, [a, b, lone], { cache });
    expect(reads.get(a)).toMatchObject({ ok: false });
    expect(String((reads.get(a) as { error: Error }).error.message)).toContain(
      'not the digest in its path',
    );
    expect(bodyOf(reads.get(b))).toBe(pod('web'));
    expect(reads.get(lone)).toMatchObject({ ok: false });
    expect(cache.puts).toEqual([sha512Hex(pod('web'))]);
    expect(cache.entries.has(sha512Hex(pod('db')))).toBe(false);
  });

  it('reports a key that is not content-addressed and a missing object per key', async () => {
    const store = new CountingStore();
    const missing = podPayloadKey('a', pod('gone'));
    const reads = await readPayloads(store, ['deployments/index.json', missing]);
    expect(reads.get('deployments/index.json')).toMatchObject({ ok: false });
    expect(reads.get(missing)).toMatchObject({
      ok: false,
      error: expect.objectContaining({ code: 'OBJECT_NOT_FOUND' }) as unknown,
    });
    expect(store.reads).toEqual([missing]);
  });

  it('stops when cancelled', async () => {
    const store = new CountingStore();
    const key = podPayloadKey('a', pod('web'));
    store.objects.set(key, Buffer.from(pod('web')));
    const controller = new AbortController();
    controller.abort();
    await expect(readPayloads(store, [key], { signal: controller.signal })).rejects.toThrow();
    expect(store.reads).toEqual([]);
  });

  it('works over the directory cache across commands', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'payload-reader-'));
    try {
      const store = new CountingStore();
      const key = podPayloadKey('a', pod('web'));
      store.objects.set(key, Buffer.from(pod('web')));
      await readPayloads(store, [key], { cache: new DirectoryPayloadCache({ dir }) });
      expect(await readdir(dir)).toEqual([sha512Hex(pod('web'))]);
      store.reads.length = 0;
      const warm = await readPayloads(store, [key], { cache: new DirectoryPayloadCache({ dir }) });
      expect(bodyOf(warm.get(key))).toBe(pod('web'));
      expect(store.reads).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
