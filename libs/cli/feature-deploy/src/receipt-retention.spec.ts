import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { receiptKey, type NodeReceipt } from '@podmin/util-receipts';
import { writeReceipt } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import {
  DEFAULT_RECEIPT_RETENTION_MS,
  MIN_RECEIPT_RETENTION_MS,
  isExpiredReceipt,
  pruneReceipts,
  splitByRetention,
} from './receipt-retention';
import { readStatusReport, type ReceiptRead } from './status';

const HOUR = 3_600_000;
const NOW = new Date('2026-12-03T12:00:00Z');

/** A parsed receipt read stored `ageMs` before NOW. */
const read = (node: string, ageMs: number, heartbeatSeconds = 300): ReceiptRead => ({
  node,
  ok: true,
  receipt: { heartbeatSeconds } as NodeReceipt,
  lastModified: new Date(NOW.getTime() - ageMs),
});

describe('receipt retention', () => {
  it('defaults to 24 hours and never goes below three default heartbeats', () => {
    expect(DEFAULT_RECEIPT_RETENTION_MS).toBe(24 * HOUR);
    expect(MIN_RECEIPT_RETENTION_MS).toBe(15 * 60_000);
  });

  it('expires a receipt only when older than the window', () => {
    expect(isExpiredReceipt(read('a', 24 * HOUR), NOW, 24 * HOUR)).toBe(false);
    expect(isExpiredReceipt(read('a', 24 * HOUR + 1), NOW, 24 * HOUR)).toBe(true);
    expect(isExpiredReceipt(read('a', 2 * HOUR), NOW, 90 * 60_000)).toBe(true);
  });

  it('never expires a node that is still live by its own heartbeat, even past the window', () => {
    // A 1 h heartbeat is stale only after 3 h: at 2 h the node is live.
    expect(isExpiredReceipt(read('slow', 2 * HOUR, 3600), NOW, HOUR)).toBe(false);
    expect(isExpiredReceipt(read('slow', 3 * HOUR + 1, 3600), NOW, HOUR)).toBe(true);
  });

  it('expires an unreadable receipt by its age alone', () => {
    const bad: ReceiptRead = {
      node: 'x',
      ok: false,
      error: 'malformed',
      lastModified: new Date(NOW.getTime() - 25 * HOUR),
    };
    expect(isExpiredReceipt(bad, NOW, 24 * HOUR)).toBe(true);
    expect(isExpiredReceipt({ ...bad, lastModified: NOW }, NOW, 24 * HOUR)).toBe(false);
  });

  it('splits reads into kept and dropped, keeping their order', () => {
    const reads = [read('a', HOUR), read('b', 30 * HOUR), read('c', 0), read('d', 48 * HOUR)];
    const { kept, dropped } = splitByRetention(reads, NOW, 24 * HOUR);
    expect(kept.map((r) => r.node)).toEqual(['a', 'c']);
    expect(dropped.map((r) => r.node)).toEqual(['b', 'd']);
  });
});

describe('status and prune against a directory bucket', () => {
  let dir: string;
  let store: LocalDirectoryObjectStore;
  const age = (key: string, ms: number): void => {
    const when = new Date(Date.now() - ms);
    fs.utimesSync(path.join(dir, key), when, when);
  };
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-retention-'));
    store = new LocalDirectoryObjectStore(dir);
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml:
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: app\n      image: hello:v1\n',
    });
    await writeReceipt(store, 'fresh', []);
    await writeReceipt(store, 'gone', []);
    await store.put(receiptKey('default', 'broken'), 'not json');
    age(receiptKey('default', 'gone'), 30 * HOUR);
    age(receiptKey('default', 'broken'), 30 * HOUR);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('status leaves out the receipts past the window and counts them per deployment', async () => {
    const report = await readStatusReport(store, { retentionMs: 24 * HOUR });
    expect(report.deployments[0]?.nodes.map((n) => n.node)).toEqual(['fresh']);
    expect(report.deployments[0]?.dropped).toBe(2);
    expect(report.dropped.map((d) => `${d.nodegroup}/${d.node}`)).toEqual([
      'default/broken',
      'default/gone',
    ]);
    expect(report.dropped[0]?.ageMs).toBeGreaterThanOrEqual(30 * HOUR);
    // Without a window every node is shown, as before.
    const all = await readStatusReport(store);
    expect(all.deployments[0]?.nodes.map((n) => n.node)).toEqual(['broken', 'fresh', 'gone']);
    expect(all.deployments[0]?.dropped).toBe(0);
  });

  it('prune deletes only those receipts, leaves the fresh one and foreign keys alone', async () => {
    await store.put('status/default/notes.txt', 'not a receipt');
    age('status/default/notes.txt', 30 * HOUR);
    const fresh = fs.readFileSync(path.join(dir, receiptKey('default', 'fresh')));
    const pruned = await pruneReceipts(store, { retentionMs: 24 * HOUR });
    expect(pruned.map((p) => p.key)).toEqual([
      'status/default/broken.json',
      'status/default/gone.json',
    ]);
    expect(pruned[1]).toMatchObject({ nodegroup: 'default', node: 'gone' });
    expect((await store.list('status/')).objects.map((o) => o.key)).toEqual([
      'status/default/fresh.json',
      'status/default/notes.txt',
    ]);
    expect(fs.readFileSync(path.join(dir, receiptKey('default', 'fresh')))).toEqual(fresh);
    expect(await pruneReceipts(store, { retentionMs: 24 * HOUR })).toEqual([]);
  });

  it('prune with a NodeGroup touches only that NodeGroup', async () => {
    expect(await pruneReceipts(store, { retentionMs: 24 * HOUR, nodegroup: 'workers' })).toEqual(
      [],
    );
    expect((await store.list('status/')).objects).toHaveLength(3);
  });

  it('prune keeps a receipt its node rewrote after the listing', async () => {
    const key = receiptKey('default', 'gone');
    const racing = {
      list: (prefix: string, token?: string) => store.list(prefix, token),
      get: (k: string, o?: { maxBytes?: number }) => store.get(k, o),
      delete: (k: string) => store.delete(k),
      head: async (k: string) => {
        // The node comes back between the listing and the delete.
        if (k === key) await writeReceipt(store, 'gone', []);
        return store.head(k);
      },
    };
    const pruned = await pruneReceipts(racing, { retentionMs: 24 * HOUR });
    expect(pruned.map((p) => p.node)).toEqual(['broken']);
    expect((await store.head(key)).lastModified.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});
