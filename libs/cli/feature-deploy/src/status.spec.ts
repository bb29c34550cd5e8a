import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { podPayloadKey } from '@podmin/util-desired-state';
import { podRevision, receiptKey } from '@podmin/util-receipts';
import { ROLLOUT_STATE_KEY, newRollout, serializeRolloutState } from '@podmin/util-rollout';
import { readyPod, snapshot, writeReceipt } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import { readStatus } from './status';
import { formatAge, rolloutLine, summaryLine } from './status-lines';

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
    await writeReceipt(store, 'node-a', [readyPod(v2, { restarts: 1 })]);
    await writeReceipt(store, 'node-b', [
      readyPod(v1, { ready: false, reason: 'ErrImagePull (container app): not found' }),
    ]);
    await writeReceipt(store, 'node-c', [readyPod(v2)], { heartbeatSeconds: 1 });
    await writeReceipt(store, 'node-d', [readyPod(v2, { ready: null, restarts: null })], {
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

  it("names a node's refusal of untrusted desired state before a Pod's reason", async () => {
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml: podYaml('hello:v2'),
    });
    const v1 = podRevision(podPayloadKey('default', podYaml('hello:v1')));
    const untrusted =
      'untrusted desired state: the index is signed by "mallory", who is not a trusted deployer (trusted: alice)';
    await writeReceipt(
      store,
      'node-a',
      [readyPod(v1, { ready: false, reason: 'CrashLoopBackOff' })],
      {
        error: untrusted,
      },
    );
    await writeReceipt(
      store,
      'node-b',
      [readyPod(v1, { ready: false, reason: 'CrashLoopBackOff' })],
      {
        error: 'reading the desired-state index: timeout',
      },
    );
    const [web] = await readStatus(store);
    expect(web?.nodes.map((n) => [n.node, n.state, n.reason])).toEqual([
      ['node-a', 'pending', untrusted],
      ['node-b', 'pending', 'CrashLoopBackOff'],
    ]);
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

  it('shows the rollout: target, updated, available, total, paused and the halt', async () => {
    const v1Key = podPayloadKey('default', podYaml('hello:v1'));
    const v2Key = podPayloadKey('default', podYaml('hello:v2'));
    await commitDeployment(store, {
      name: 'web',
      nodegroup: 'default',
      podYaml: podYaml('hello:v2'),
    });
    const row = (revision: string, ready: boolean | null) => readyPod(revision, { ready });
    await writeReceipt(store, 'node-a', [row(podRevision(v2Key), true)]);
    await writeReceipt(store, 'node-b', [row(podRevision(v2Key), false)]);
    await writeReceipt(store, 'node-c', [row(podRevision(v1Key), true)]);
    await writeReceipt(store, 'node-d', [row(podRevision(v2Key), true)], { heartbeatSeconds: 1 });
    const later = new Date(Date.now() + 10_000);
    const [plain] = await readStatus(store, { now: () => later });
    expect(plain?.rollout).toEqual({
      target: podRevision(v2Key),
      updated: 2,
      available: 1,
      total: 3,
      paused: false,
      halted: null,
    });
    expect(rolloutLine(plain!)).toBe(
      `web rollout to ${podRevision(v2Key)}: 2/3 updated, 1 available`,
    );

    const halt = {
      node: 'node-b',
      reason: 'Pod not available\u001b[31m',
      time: '2024-01-01T00:05:00.000Z',
    };
    await store.put(
      ROLLOUT_STATE_KEY,
      serializeRolloutState({
        schema: 1,
        deployments: { 'default/web': { ...newRollout(v2Key, true), halted: halt } },
      }),
    );
    const [halted] = await readStatus(store, { now: () => later });
    expect(halted?.rollout).toMatchObject({ paused: true, halted: halt });
    expect(rolloutLine(halted!)).toBe(
      `web rollout to ${podRevision(v2Key)}: 2/3 updated, 1 available, paused; halted: node-b: Pod not available\\x1b[31m`,
    );
    // A halt of a superseded target is not shown; a pause is.
    await store.put(
      ROLLOUT_STATE_KEY,
      serializeRolloutState({
        schema: 1,
        deployments: { 'default/web': { ...newRollout(v1Key, true), halted: halt } },
      }),
    );
    const [older] = await readStatus(store, { now: () => later });
    expect(older?.rollout).toMatchObject({ paused: true, halted: null });

    await store.put(ROLLOUT_STATE_KEY, '{"schema": 1}');
    const warnings: string[] = [];
    const [malformed] = await readStatus(store, {
      now: () => later,
      warn: (m) => warnings.push(m),
    });
    expect(malformed?.rollout).toMatchObject({ updated: 2, paused: false, halted: null });
    expect(warnings).toEqual([expect.stringContaining(ROLLOUT_STATE_KEY) as string]);
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
