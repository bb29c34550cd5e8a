import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InMemoryObjectStore } from '@podmin/testing';
import { commitDeployment } from './commit';
import { listDeployments } from './list';
import { FileSummaryCache, summaryCacheIn } from './list-summaries';

const noWait = () => Promise.resolve();
const pod = (name: string, namespace: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;

describe('listDeployments with a summary cache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'podmin-list-summaries-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fleet(store: InMemoryObjectStore): Promise<void> {
    for (const [name, ns] of [
      ['web', 'product'],
      ['api', 'product'],
      ['jobs', 'batch'],
    ] as const)
      await commitDeployment(
        store,
        { name, nodegroup: 'default', podYaml: pod(name, ns) },
        {
          backoff: noWait,
        },
      );
  }

  it('reads no payload on a second run, and shows the same rows', async () => {
    const store = new InMemoryObjectStore();
    await fleet(store);
    const summaries = summaryCacheIn(dir);
    const first = await listDeployments(store, undefined, 'podmin', { summaries });
    const file = path.join(dir, 'list', 'summaries.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    store.calls.length = 0;
    const second = await listDeployments(store, undefined, 'podmin', { summaries });
    expect(second).toEqual(first);
    expect(second.map((r) => [r.name, r.namespace])).toEqual([
      ['api', 'product'],
      ['jobs', 'batch'],
      ['web', 'product'],
    ]);
    // Only the index: every payload's summary came from the cache.
    expect(store.calls.filter((c) => c.startsWith('get'))).toEqual(['get deployments/index.json']);
  });

  it('reads payloads the payload cache holds from it, and writes none there', async () => {
    const store = new InMemoryObjectStore();
    await fleet(store);
    const held = new Map<string, Buffer>();
    const puts: string[] = [];
    const cache = {
      get: (digest: string) => Promise.resolve(held.get(digest)),
      put: (digest: string, body: Buffer) => {
        puts.push(digest);
        held.set(digest, body);
        return Promise.resolve();
      },
    };
    // Without summaries, list fills the payload cache; with them it only reads from it.
    const rows = await listDeployments(store, undefined, undefined, { cache });
    expect(puts).toHaveLength(3);
    puts.length = 0;
    store.calls.length = 0;
    const summaries = summaryCacheIn(dir);
    expect(await listDeployments(store, undefined, undefined, { cache, summaries })).toEqual(rows);
    expect(store.calls.filter((c) => c.startsWith('get'))).toEqual(['get deployments/index.json']);
    held.clear();
    await rm(path.join(dir, 'list'), { recursive: true, force: true });
    expect(await listDeployments(store, undefined, undefined, { cache, summaries })).toEqual(rows);
    expect(puts).toEqual([]);
  });

  it('reads only a new payload, and forgets summaries the index no longer names', async () => {
    const store = new InMemoryObjectStore();
    await fleet(store);
    const summaries = new FileSummaryCache(path.join(dir, 's.json'));
    await listDeployments(store, undefined, undefined, { summaries });
    const before = Object.keys(
      (JSON.parse(await readFile(path.join(dir, 's.json'), 'utf8')) as { summaries: object })
        .summaries,
    );
    expect(before).toHaveLength(3);
    // Redeploy web with another Pod: one new digest, one digest no longer named.
    const { entry } = await commitDeployment(
      store,
      { name: 'web', nodegroup: 'default', podYaml: pod('web', 'shop') },
      { backoff: noWait },
    );
    store.calls.length = 0;
    const rows = await listDeployments(store, undefined, undefined, { summaries });
    expect(rows.find((r) => r.name === 'web')?.namespace).toBe('shop');
    expect(store.calls.filter((c) => c.startsWith('get'))).toEqual([
      'get deployments/index.json',
      `get ${entry.pod}`,
    ]);
    const after = (await summaries.load()).size;
    expect(after).toBe(3);
  });

  it('treats a corrupt or foreign cache file as empty and rewrites it', async () => {
    const store = new InMemoryObjectStore();
    await fleet(store);
    const file = path.join(dir, 's.json');
    for (const junk of ['{not json', '[]', '{"format":"other","summaries":{}}']) {
      await writeFile(file, junk);
      const summaries = new FileSummaryCache(file);
      expect((await summaries.load()).size).toBe(0);
      const rows = await listDeployments(store, undefined, undefined, { summaries });
      expect(rows).toHaveLength(3);
      expect((await summaries.load()).size).toBe(3);
    }
  });

  it('never keeps a summary of a payload that failed verification', async () => {
    const store = new InMemoryObjectStore();
    const { entry } = await commitDeployment(
      store,
      { name: 'web', nodegroup: 'default', podYaml: pod('web', 'product') },
      { backoff: noWait },
    );
    store.store(entry.pod, pod('web', 'evil'));
    const summaries = new FileSummaryCache(path.join(dir, 's.json'));
    const warnings: string[] = [];
    const rows = await listDeployments(store, (m) => warnings.push(m), undefined, { summaries });
    expect(rows[0]?.namespace).toBe('default');
    expect(warnings[0]).toContain('not the digest in its path');
    expect((await summaries.load()).size).toBe(0);
  });

  it('lists even when the cache cannot be written', async () => {
    const store = new InMemoryObjectStore();
    await fleet(store);
    await writeFile(path.join(dir, 'file'), 'x');
    // A path below a regular file: every write fails.
    const summaries = new FileSummaryCache(path.join(dir, 'file', 's.json'));
    const rows = await listDeployments(store, undefined, undefined, { summaries });
    expect(rows).toHaveLength(3);
  });
});
