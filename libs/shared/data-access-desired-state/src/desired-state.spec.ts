import { createHash } from 'node:crypto';
import { hasCode, PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  MAX_PAYLOAD_BYTES,
  podPayloadKey,
  serializeIndex,
  servicePayloadKey,
  withDeployment,
} from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import type { ConditionalGetResult, ReadOptions, StoredObject } from './desired-state.port';
import { isIndexCurrent, readIndex, readIndexIfChanged } from './index-store';
import { putPayload, readPayload, readPodPayload, readServicePayload } from './payload-store';
import { updateIndex, updateIndexEntry } from './update-index';

/** Map-backed store fake recording each call with the options it got; can race a writer. */
class FakeStore {
  readonly objects = new Map<string, { body: Buffer; etag: string }>();
  readonly calls: Array<{ call: string; options?: ReadOptions }> = [];
  beforeWrite: ((key: string) => void) | undefined;

  set(key: string, body: string | Buffer): string {
    const bytes = Buffer.from(body);
    const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
    this.objects.set(key, { body: bytes, etag });
    return etag;
  }
  get(key: string, options?: ReadOptions): Promise<StoredObject> {
    this.calls.push({ call: `get ${key}`, ...(options ? { options } : {}) });
    const object = this.objects.get(key);
    if (!object) return Promise.reject(new PodminError('OBJECT_NOT_FOUND', `${key}: absent`));
    if (options?.maxBytes !== undefined && object.body.length > options.maxBytes)
      return Promise.reject(new PodminError('OBJECT_TOO_LARGE', `${key}: too large`));
    return Promise.resolve({ body: Buffer.from(object.body), etag: object.etag });
  }
  getIfChanged(key: string, etag: string, options?: ReadOptions): Promise<ConditionalGetResult> {
    this.calls.push({ call: `getIfChanged ${key}`, ...(options ? { options } : {}) });
    const object = this.objects.get(key);
    if (!object) return Promise.reject(new PodminError('OBJECT_NOT_FOUND', `${key}: absent`));
    return Promise.resolve(
      object.etag === etag
        ? { status: 'unchanged', etag }
        : { status: 'changed', body: Buffer.from(object.body), etag: object.etag },
    );
  }
  putIfAbsent(key: string, body: string | Buffer): Promise<string> {
    this.calls.push({ call: `putIfAbsent ${key}` });
    this.beforeWrite?.(key);
    if (this.objects.has(key))
      return Promise.reject(new PodminError('PRECONDITION_FAILED', `${key}: exists`));
    return Promise.resolve(this.set(key, body));
  }
  putIfMatch(key: string, body: string | Buffer, etag: string): Promise<string> {
    this.calls.push({ call: `putIfMatch ${key}` });
    this.beforeWrite?.(key);
    if (this.objects.get(key)?.etag !== etag)
      return Promise.reject(new PodminError('PRECONDITION_FAILED', `${key}: changed`));
    return Promise.resolve(this.set(key, body));
  }
}

const d = buildDeployment(
  `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: web, namespace: product }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      nodeSelector: { podmin.dev/nodegroup: workers }
      containers: [{ name: app, image: hello:v1 }]
---
apiVersion: v1
kind: Service
metadata: { name: frontend, namespace: product }
spec:
  selector: { app: web }
  ports: [{ port: 80 }]
`,
  { source: 'test' },
);
const pod = podPayloadKey('workers', d.podYaml);
const svc = servicePayloadKey('product', 'frontend', d.service!.yaml);
const noWait = () => Promise.resolve();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('reading the index', () => {
  it('tells a missing index apart from an empty one, and passes the signal on', async () => {
    const store = new FakeStore();
    const signal = new AbortController().signal;
    expect(await readIndex(store, { signal })).toEqual({ status: 'absent' });
    expect(store.calls[0]?.options?.signal).toBe(signal);
    const etag = store.set(INDEX_KEY, '{}\n');
    expect(await readIndex(store)).toEqual({ status: 'present', index: {}, etag });
  });

  it('answers a conditional read as unchanged, changed or absent', async () => {
    const store = new FakeStore();
    const first = store.set(INDEX_KEY, serializeIndex({ 'workers/web': { pod } }));
    expect(await readIndexIfChanged(store, first)).toEqual({ status: 'unchanged', etag: first });
    const second = store.set(INDEX_KEY, serializeIndex({}));
    expect(await readIndexIfChanged(store, first)).toEqual({
      status: 'present',
      index: {},
      etag: second,
    });
    store.objects.delete(INDEX_KEY);
    expect(await readIndexIfChanged(store, second)).toEqual({ status: 'absent' });
  });

  it('refuses an index another tool edited to give one Service two owners', async () => {
    const store = new FakeStore();
    const other = servicePayloadKey('product', 'frontend', 'another tool');
    store.set(
      INDEX_KEY,
      JSON.stringify({
        'workers/web': { pod, service: svc },
        'edge/web': { pod: podPayloadKey('edge', 'x'), service: other },
      }),
    );
    for (const read of [readIndex(store), readIndexIfChanged(store, '"old"')]) {
      const err = await rejection(read);
      expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
      expect(String(err)).toContain(
        'Service product/frontend is owned by edge/web and workers/web',
      );
    }
  });

  it('fences on the version seen: same ETag, or still absent', async () => {
    const store = new FakeStore();
    expect(await isIndexCurrent(store, null)).toBe(true);
    const etag = store.set(INDEX_KEY, '{}\n');
    expect(await isIndexCurrent(store, null)).toBe(false);
    expect(await isIndexCurrent(store, etag)).toBe(true);
    store.set(INDEX_KEY, serializeIndex({ 'workers/web': { pod } }));
    expect(await isIndexCurrent(store, etag)).toBe(false);
    store.objects.delete(INDEX_KEY);
    expect(await isIndexCurrent(store, etag)).toBe(false);
  });
});

describe('payloads', () => {
  it('reads verified, strictly parsed Pod and Service payloads', async () => {
    const store = new FakeStore();
    store.set(pod, d.podYaml);
    store.set(svc, d.service!.yaml);
    const signal = new AbortController().signal;
    expect(await readPodPayload(store, pod, { signal })).toEqual({
      name: 'web',
      namespace: 'product',
      pod: d.pod,
    });
    expect(store.calls[0]?.options).toEqual({ maxBytes: MAX_PAYLOAD_BYTES, signal });
    expect((await readServicePayload(store, svc)).object).toEqual(d.service!.object);
  });

  it('rejects tampered bytes, oversize objects and payloads the strict parser refuses', async () => {
    const store = new FakeStore();
    store.set(pod, `${d.podYaml}# tampered\n`);
    await expect(readPayload(store, pod)).rejects.toThrow(/not the digest in its path/);
    const big = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20);
    const bigKey = podPayloadKey('workers', big);
    store.set(bigKey, big);
    await expect(readPayload(store, bigKey)).rejects.toMatchObject({ code: 'OBJECT_TOO_LARGE' });
    // Correct digest, but a duplicate key: raw yaml.parse would keep the last one silently.
    const duplicate = `${d.podYaml}kind: Pod\n`;
    const dupKey = podPayloadKey('workers', duplicate);
    store.set(dupKey, duplicate);
    await expect(readPodPayload(store, dupKey)).rejects.toThrow(/duplicate map key/);
  });

  it('refuses a Service payload whose content names another Service than its path', async () => {
    const store = new FakeStore();
    const elsewhere = servicePayloadKey('product', 'checkout', d.service!.yaml);
    store.set(elsewhere, d.service!.yaml);
    await expect(readServicePayload(store, elsewhere)).rejects.toThrow(
      'it defines Service product/frontend, not the product/checkout its path names',
    );
  });

  it('writes create-only, reuses an existing payload and refuses a key for other bytes', async () => {
    const store = new FakeStore();
    await putPayload(store, pod, d.podYaml);
    await putPayload(store, pod, d.podYaml);
    expect(store.calls.map((c) => c.call)).toEqual([`putIfAbsent ${pod}`, `putIfAbsent ${pod}`]);
    await expect(putPayload(store, pod, 'other bytes')).rejects.toThrow(
      /does not name the SHA-512/,
    );
    const aborted = new AbortController();
    aborted.abort(new Error('deadline'));
    await expect(putPayload(store, svc, d.service!.yaml, aborted)).rejects.toThrow('deadline');
    expect(store.objects.has(svc)).toBe(false);
  });
});

describe('updateIndex', () => {
  const entry = { pod, service: svc };

  it('creates the index create-only when there is none', async () => {
    const store = new FakeStore();
    const result = await updateIndex(store, (i) => withDeployment(i, 'workers/web', entry));
    expect(result).toEqual({ changed: true, attempts: 1 });
    expect(store.calls.map((c) => c.call)).toEqual([
      `get ${INDEX_KEY}`,
      `putIfAbsent ${INDEX_KEY}`,
    ]);
  });

  it('rereads and reapplies after a competing writer, running beforeFirstWrite once', async () => {
    const store = new FakeStore();
    store.set(INDEX_KEY, '{}\n');
    let raced = false;
    store.beforeWrite = (key) => {
      if (key !== INDEX_KEY || raced) return;
      raced = true;
      store.set(INDEX_KEY, serializeIndex({ 'edge/api': { pod: podPayloadKey('edge', 'a') } }));
    };
    let prepared = 0;
    const result = await updateIndex(store, (i) => withDeployment(i, 'workers/web', entry), {
      backoff: noWait,
      beforeFirstWrite: () => Promise.resolve(void prepared++),
    });
    expect(result).toEqual({ changed: true, attempts: 2 });
    expect(prepared).toBe(1);
    const after = await readIndex(store);
    expect(after.status === 'present' && Object.keys(after.index)).toEqual([
      'edge/api',
      'workers/web',
    ]);
  });

  it('gives up after the bounded attempts and writes nothing when nothing changes', async () => {
    const store = new FakeStore();
    store.set(INDEX_KEY, '{}\n');
    let n = 0;
    store.beforeWrite = () =>
      store.set(
        INDEX_KEY,
        serializeIndex({ [`edge/x${n++}`]: { pod: podPayloadKey('edge', String(n)) } }),
      );
    await expect(
      updateIndex(store, (i) => withDeployment(i, 'workers/web', entry), {
        backoff: noWait,
        maxAttempts: 3,
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT_RETRIES_EXHAUSTED' });
    store.calls.length = 0;
    expect(await updateIndex(store, () => undefined)).toEqual({ changed: false, attempts: 1 });
    expect(store.calls.map((c) => c.call)).toEqual([`get ${INDEX_KEY}`]);
  });

  it('passes its signal to reads and writes nothing once aborted', async () => {
    const store = new FakeStore();
    const controller = new AbortController();
    const err = await rejection(
      updateIndex(
        store,
        (i) => {
          controller.abort(new Error('cancelled by the caller'));
          return withDeployment(i, 'workers/web', entry);
        },
        { signal: controller.signal },
      ),
    );
    expect(String(err)).toContain('cancelled by the caller');
    expect(store.calls).toEqual([
      { call: `get ${INDEX_KEY}`, options: expect.objectContaining({ signal: controller.signal }) },
    ]);
    expect(store.objects.has(INDEX_KEY)).toBe(false);
  });
});

describe('updateIndexEntry', () => {
  const entry = { pod, service: svc };
  const other = { pod: podPayloadKey('edge', 'a') };

  it('writes the same bytes from canonical text and from another tool’s formatting', async () => {
    const canonical = new FakeStore();
    canonical.set(INDEX_KEY, serializeIndex({ 'edge/api': other }));
    const compact = new FakeStore();
    compact.set(INDEX_KEY, JSON.stringify({ 'edge/api': other }));
    for (const store of [canonical, compact]) {
      expect(await updateIndexEntry(store, 'workers/web', entry)).toEqual({
        changed: true,
        attempts: 1,
      });
      expect(store.objects.get(INDEX_KEY)?.body.toString()).toBe(
        serializeIndex({ 'edge/api': other, 'workers/web': entry }),
      );
    }
    expect(await updateIndexEntry(compact, 'workers/web', entry)).toEqual({
      changed: false,
      attempts: 1,
      previous: entry,
    });
    expect(await updateIndexEntry(compact, 'edge/api', null)).toEqual({
      changed: true,
      attempts: 1,
      previous: other,
    });
    expect(compact.objects.get(INDEX_KEY)?.body.toString()).toBe(
      serializeIndex({ 'workers/web': entry }),
    );
  });

  it('creates the index when there is none, and calls onMissing for an absent removal', async () => {
    const store = new FakeStore();
    expect(await updateIndexEntry(store, 'workers/web', null)).toEqual({
      changed: false,
      attempts: 1,
    });
    expect(store.objects.has(INDEX_KEY)).toBe(false);
    await expect(
      updateIndexEntry(store, 'workers/web', null, {
        onMissing: () => {
          throw new PodminError('NOT_FOUND', 'no such deployment');
        },
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await updateIndexEntry(store, 'workers/web', entry);
    expect(store.calls.filter((c) => c.call.startsWith('put')).map((c) => c.call)).toEqual([
      `putIfAbsent ${INDEX_KEY}`,
    ]);
  });

  it('refuses an index the strict parse refuses, and writes nothing', async () => {
    const store = new FakeStore();
    store.set(INDEX_KEY, '{"edge/api": {"pod": "x"}, "edge/api": {"pod": "y"}}');
    await expect(updateIndexEntry(store, 'workers/web', entry)).rejects.toMatchObject({
      code: 'INVALID_MANIFEST',
    });
    expect(store.calls.map((c) => c.call)).toEqual([`get ${INDEX_KEY}`]);
  });

  it('reapplies after a competing writer and reports what the winning attempt replaced', async () => {
    const store = new FakeStore();
    store.set(
      INDEX_KEY,
      serializeIndex({ 'workers/web': { pod: podPayloadKey('workers', 'old') } }),
    );
    const replaced = { pod: podPayloadKey('workers', 'racer') };
    let raced = false;
    store.beforeWrite = () => {
      if (raced) return;
      raced = true;
      store.set(INDEX_KEY, serializeIndex({ 'edge/api': other, 'workers/web': replaced }));
    };
    const result = await updateIndexEntry(store, 'workers/web', entry, { backoff: noWait });
    expect(result).toEqual({ changed: true, attempts: 2, previous: replaced });
    expect(store.objects.get(INDEX_KEY)?.body.toString()).toBe(
      serializeIndex({ 'edge/api': other, 'workers/web': entry }),
    );
  });
});
