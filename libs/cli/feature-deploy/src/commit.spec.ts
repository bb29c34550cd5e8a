import { InMemoryObjectStore } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  MAX_PAYLOAD_BYTES,
  parseIndex,
  podPayloadKey,
  serializeIndex,
} from '@podmin/util-desired-state';
import { commitDeployment, deleteDeployment, ensurePayload } from './commit';
import { listDeployments } from './list';

const noWait = () => Promise.resolve();
const web = {
  name: 'web',
  nodegroup: 'default',
  podYaml: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: product\n',
  service: { name: 'frontend', namespace: 'product', yaml: 'kind: Service\n' },
};

describe('commitDeployment', () => {
  it('creates payloads then the index when there is none', async () => {
    const store = new InMemoryObjectStore();
    const result = await commitDeployment(store, web, { backoff: noWait });
    expect(result).toMatchObject({ key: 'default/web', changed: true, attempts: 1 });
    // Each payload is read first (absent here), then created; the index comes last.
    expect(store.calls.map((c) => c.split(' ')[0])).toEqual([
      'get',
      'get',
      'putIfAbsent',
      'get',
      'putIfAbsent',
      'putIfAbsent',
    ]);
    expect(store.calls.at(-1)).toBe(`putIfAbsent ${INDEX_KEY}`);
    const index = parseIndex(store.objects.get(INDEX_KEY)!.body);
    expect(index['default/web']?.pod).toBe(podPayloadKey('default', web.podYaml));
  });

  it('needs at most four requests when payloads exist, and three when nothing changed', async () => {
    const store = new InMemoryObjectStore();
    const first = await commitDeployment(store, web, { backoff: noWait });
    await deleteDeployment(store, 'default', 'web', { backoff: noWait });
    store.calls.length = 0;
    await commitDeployment(store, web, { backoff: noWait });
    expect(store.calls).toHaveLength(4);
    store.calls.length = 0;
    const again = await commitDeployment(store, web, { backoff: noWait });
    expect(again.changed).toBe(false);
    // Nothing is written, but what the entry points at is verified.
    expect(store.calls).toEqual([
      `get ${INDEX_KEY}`,
      `get ${first.entry.pod}`,
      `get ${first.entry.service ?? ''}`,
    ]);
  });

  it('needs at most five requests with a new Pod payload beside an existing Service, then one history record', async () => {
    const store = new InMemoryObjectStore();
    await commitDeployment(store, web, { backoff: noWait });
    store.calls.length = 0;
    const podYaml = `${web.podYaml}  labels: {v: "2"}\n`;
    const result = await commitDeployment(store, { ...web, podYaml }, { backoff: noWait });
    expect(result.changed).toBe(true);
    // The commit path is five requests; the replaced entry's create-only record follows it.
    expect(store.calls.slice(0, -1)).toHaveLength(5);
    expect(store.calls.at(-2)).toBe(`putIfMatch ${INDEX_KEY}`);
    expect(store.calls.at(-1)).toMatch(
      /^putIfAbsent history\/default\/web\/\d{8}T\d{9}Z-[0-9a-f]{16}\.json$/,
    );
  });

  it('repairs a corrupt or oversized payload at its key by if-match, and reports it', async () => {
    const store = new InMemoryObjectStore();
    const { entry } = await commitDeployment(store, web, { backoff: noWait });
    await deleteDeployment(store, 'default', 'web', { backoff: noWait });
    store.store(entry.pod, 'garbage');
    store.store(entry.service!, Buffer.alloc(MAX_PAYLOAD_BYTES + 1));
    store.calls.length = 0;
    const result = await commitDeployment(store, web, { backoff: noWait });
    expect(result.repaired).toEqual([entry.pod, entry.service]);
    expect(store.objects.get(entry.pod)?.body.toString()).toBe(web.podYaml);
    expect(store.objects.get(entry.service!)?.body.toString()).toBe(web.service.yaml);
    expect(store.calls).toContain(`putIfMatch ${entry.pod}`);
    expect(store.calls).toContain(`head ${entry.service}`);
    // Unchanged entry, corrupt payload: repaired too.
    store.store(entry.pod, '');
    const again = await commitDeployment(store, web, { backoff: noWait });
    expect(again).toMatchObject({ changed: false, repaired: [entry.pod] });
    expect(store.objects.get(entry.pod)?.body.toString()).toBe(web.podYaml);
  });

  it('re-reads when another writer creates the payload first, and accepts intact bytes', async () => {
    const store = new InMemoryObjectStore();
    const key = podPayloadKey('default', web.podYaml);
    store.beforeConditionalWrite = (written) => {
      if (written === key && !store.objects.has(key)) store.store(key, web.podYaml);
    };
    await expect(ensurePayload(store, key, web.podYaml)).resolves.toBe('verified');
    await expect(ensurePayload(store, key, 'other')).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('rereads and reapplies on a conflicting writer without losing its update', async () => {
    const store = new InMemoryObjectStore();
    store.store(INDEX_KEY, serializeIndex({}));
    let raced = false;
    store.beforeConditionalWrite = (key) => {
      if (key === INDEX_KEY && !raced) {
        raced = true;
        store.store(
          INDEX_KEY,
          serializeIndex({ 'default/other': { pod: podPayloadKey('default', 'other') } }),
        );
      }
    };
    const result = await commitDeployment(store, web, { backoff: noWait });
    expect(result.attempts).toBe(2);
    expect(Object.keys(parseIndex(store.objects.get(INDEX_KEY)!.body))).toEqual([
      'default/other',
      'default/web',
    ]);
  });

  it('retries the index write after an S3 409 ConditionalRequestConflict (CONFLICT)', async () => {
    const store = new InMemoryObjectStore();
    store.store(INDEX_KEY, serializeIndex({}));
    let conflicts = 0;
    store.beforeConditionalWrite = (key) => {
      if (key === INDEX_KEY && conflicts++ === 0) {
        throw new PodminError('CONFLICT', `replacing ${key}: a concurrent write was in progress`);
      }
    };
    const result = await commitDeployment(store, web, { backoff: noWait });
    expect(result.attempts).toBe(2);
    expect(Object.keys(parseIndex(store.objects.get(INDEX_KEY)!.body))).toEqual(['default/web']);
  });

  it('gives up after the bounded number of conflicts and commits nothing', async () => {
    const store = new InMemoryObjectStore();
    store.store(INDEX_KEY, serializeIndex({}));
    let n = 0;
    store.beforeConditionalWrite = (key) => {
      if (key === INDEX_KEY)
        store.store(
          INDEX_KEY,
          serializeIndex({ [`default/x${n++}`]: { pod: podPayloadKey('default', String(n)) } }),
        );
    };
    await expect(
      commitDeployment(store, web, { backoff: noWait, maxAttempts: 3 }),
    ).rejects.toMatchObject({ code: 'CONFLICT_RETRIES_EXHAUSTED' });
    expect(parseIndex(store.objects.get(INDEX_KEY)!.body)['default/web']).toBeUndefined();
  });

  it('refuses a Service owned by another deployment before writing anything', async () => {
    const store = new InMemoryObjectStore();
    await commitDeployment(store, web, { backoff: noWait });
    const before = new Map(store.objects);
    await expect(
      commitDeployment(store, { ...web, name: 'thief', podYaml: 'x: 1\n' }, { backoff: noWait }),
    ).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
    expect([...store.objects.keys()]).toEqual([...before.keys()]);
  });
});

describe('deleteDeployment and listDeployments', () => {
  it('lists verified payloads and reports a missing deployment on delete', async () => {
    const store = new InMemoryObjectStore();
    expect(await listDeployments(store)).toEqual([]);
    await commitDeployment(store, web, { backoff: noWait });
    const rows = await listDeployments(store);
    expect(rows).toEqual([
      expect.objectContaining({
        name: 'web',
        namespace: 'product',
        nodegroup: 'default',
        service: 'frontend',
        origin: null,
      }),
    ]);
    await expect(
      deleteDeployment(store, 'default', 'nope', { backoff: noWait }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it("shows each Service's VIP in the context's cluster, and none without a Service", async () => {
    const store = new InMemoryObjectStore();
    await commitDeployment(store, web, { backoff: noWait });
    await commitDeployment(
      store,
      { name: 'worker', nodegroup: 'default', podYaml: 'metadata:\n  name: worker\n' },
      { backoff: noWait },
    );
    const rows = await listDeployments(store, undefined, 'podmin');
    // printf 'podmin\0product\0frontend' | openssl dgst -sha512 → 5a319f633f300da1…
    expect(rows.map((r) => [r.name, r.vip])).toEqual([
      ['web', 'fd50:6f64:6d69:0:5a31:9f63:3f30:da1'],
      ['worker', null],
    ]);
    expect(JSON.parse(JSON.stringify(rows))[0]).toHaveProperty(
      'vip',
      'fd50:6f64:6d69:0:5a31:9f63:3f30:da1',
    );
    expect((await listDeployments(store))[0]?.vip).toBeNull();
  });

  it('warns about a tampered payload instead of trusting it', async () => {
    const store = new InMemoryObjectStore();
    const { entry } = await commitDeployment(store, web, { backoff: noWait });
    store.store(entry.pod, 'metadata:\n  namespace: evil\n');
    const warnings: string[] = [];
    const rows = await listDeployments(store, (m) => warnings.push(m));
    expect(rows[0]?.namespace).toBe('product');
    expect(warnings[0]).toContain('not the digest in its path');
  });

  it('reads a Pod shared by many NodeGroups once, and nothing the cache holds', async () => {
    const store = new InMemoryObjectStore();
    for (const nodegroup of ['a', 'b', 'c'])
      await commitDeployment(
        store,
        { name: web.name, podYaml: web.podYaml, nodegroup },
        { backoff: noWait },
      );
    const cached = new Map<string, Buffer>();
    const cache = {
      get: (digest: string) => Promise.resolve(cached.get(digest)),
      put: (digest: string, body: Buffer) => Promise.resolve(void cached.set(digest, body)),
    };
    store.calls.length = 0;
    const rows = await listDeployments(store, undefined, undefined, { cache });
    expect(rows.map((r) => [r.nodegroup, r.namespace])).toEqual([
      ['a', 'product'],
      ['b', 'product'],
      ['c', 'product'],
    ]);
    expect(store.calls).toEqual([`get ${INDEX_KEY}`, `get ${rows[0]?.pod}`]);
    store.calls.length = 0;
    expect(await listDeployments(store, undefined, undefined, { cache })).toEqual(rows);
    expect(store.calls).toEqual([`get ${INDEX_KEY}`]);
  });

  it('names the deployment and the key of a payload it cannot verify, and caches none', async () => {
    const store = new InMemoryObjectStore();
    const { entry } = await commitDeployment(store, web, { backoff: noWait });
    store.store(entry.pod, 'metadata:\n  namespace: evil\n');
    const puts: string[] = [];
    const cache = {
      get: () => Promise.resolve(undefined),
      put: (digest: string) => Promise.resolve(void puts.push(digest)),
    };
    const warnings: string[] = [];
    const rows = await listDeployments(store, (m) => warnings.push(m), undefined, { cache });
    expect(rows[0]?.namespace).toBe('product');
    expect(warnings).toEqual([expect.stringContaining(`of default/web`)]);
    expect(warnings[0]).toContain(entry.pod);
    expect(puts).toEqual([]);
  });

  it('shows only recognised origins', async () => {
    const store = new InMemoryObjectStore();
    const pod = (origin: string) =>
      `metadata:\n  annotations:\n    podmin.dev/origin: ${origin}\n  namespace: edge\n`;
    await commitDeployment(
      store,
      { name: 'tunnel', nodegroup: 'default', podYaml: pod('install/cloudflared') },
      { backoff: noWait },
    );
    await commitDeployment(
      store,
      { name: 'fake', nodegroup: 'default', podYaml: pod('install/other') },
      { backoff: noWait },
    );
    const rows = await listDeployments(store);
    expect(rows.map((r) => [r.name, r.origin])).toEqual([
      ['fake', null],
      ['tunnel', 'install/cloudflared'],
    ]);
  });
});
