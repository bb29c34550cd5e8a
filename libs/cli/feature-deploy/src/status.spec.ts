import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { podPayloadKey } from '@podmin/util-desired-state';
import { podRevision, receiptKey, type PodReceipt } from '@podmin/util-receipts';
import { snapshot, writeReceipt } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import { formatAge, readStatus, summaryLine } from './status';

const podYaml = (image: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: app\n      image: ${image}\n`;

describe('readStatus', () => {
  let dir: string;
  let store: LocalDirectoryObjectStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-status-'));
    store = new LocalDirectoryObjectStore(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('shows desired against applied per node, stale and malformed receipts, and changes nothing', async () => {
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml: podYaml('hello:v1'),
    });
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml: podYaml('hello:v2'),
    });
    const v1 = podRevision(podPayloadKey('default', podYaml('hello:v1')));
    const v2 = podRevision(podPayloadKey('default', podYaml('hello:v2')));
    const row = (revision: string, over: Partial<PodReceipt> = {}): PodReceipt => ({
      deployment: 'default/web',
      revision,
      ready: true,
      restarts: 0,
      reason: null,
      identityExpiry: null,
      ...over,
    });
    await writeReceipt(store, 'node-a', [row(v2, { restarts: 1 })]);
    await writeReceipt(store, 'node-b', [
      row(v1, { ready: false, reason: 'ErrImagePull (container app): not found' }),
    ]);
    await writeReceipt(store, 'node-c', [row(v2)], { heartbeatSeconds: 1 });
    await writeReceipt(store, 'node-d', [row(v2, { ready: null, restarts: null })], {
      kubelet: 'absent',
    });
    await store.put(receiptKey('default', 'node-e'), '{"schema": 1, "schema": 1}');
    const before = await snapshot(store);

    const later = new Date(Date.now() + 10_000);
    const [web, ...rest] = await readStatus(store, { name: 'web', now: () => later });
    expect(rest).toEqual([]);
    expect(web).toMatchObject({ key: 'default/web', desired: v2, live: 3, ready: 1 });
    expect(web?.nodes.map((n) => [n.node, n.state, n.applied])).toEqual([
      ['node-a', 'ready', v2],
      ['node-b', 'pending', v1],
      ['node-c', 'stale', v2],
      ['node-d', 'applied', v2],
      ['node-e', 'error', null],
    ]);
    expect(web?.nodes[1]?.reason).toBe('ErrImagePull (container app): not found');
    expect(web?.nodes[4]?.reason).toMatch(
      /^malformed receipt status\/default\/node-e\.json: .*duplicate key "schema"/,
    );
    expect(summaryLine(web!)).toBe(
      'web: 1/3 ready (1 applied, Ready unknown, 1 pending, 1 stale, 1 unreadable)',
    );
    expect(await snapshot(store)).toEqual(before);
  });

  it('says 3/3 ready when every node is', async () => {
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml: podYaml('hello:v1'),
    });
    const v1 = podRevision(podPayloadKey('default', podYaml('hello:v1')));
    for (const node of ['n1', 'n2', 'n3'])
      await writeReceipt(store, node, [
        {
          deployment: 'default/web',
          revision: v1,
          ready: true,
          restarts: 0,
          reason: null,
          identityExpiry: null,
        },
      ]);
    const [web] = await readStatus(store);
    expect(summaryLine(web!)).toBe('web: 3/3 ready');
  });

  it('refuses an unknown deployment with NOT_FOUND', async () => {
    await expect(readStatus(store, { name: 'nope', nodegroup: 'default' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('default/nope') as string,
    });
  });

  it('formats ages', () => {
    expect([
      formatAge(5_000),
      formatAge(600_000),
      formatAge(3 * 3_600_000),
      formatAge(5 * 86_400_000),
    ]).toEqual(['5s', '10m', '3h', '5d']);
  });
});
