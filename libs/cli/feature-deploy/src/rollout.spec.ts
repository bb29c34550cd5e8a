import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { INDEX_KEY, parseIndex, podPayloadKey } from '@podmin/util-desired-state';
import type { Deployment } from '@podmin/util-manifest';
import {
  DEFAULT_STRATEGY,
  ROLLOUT_STATE_KEY,
  newRollout,
  serializeRolloutState,
  type DeploymentRollout,
} from '@podmin/util-rollout';
import { podRevision } from '@podmin/util-receipts';
import { readyPod as row, writeReceipt } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import { readHistory } from './history';
import { deployAndWait, type RolloutDeps } from './rollout';
import { RolloutFailedError } from './wait';

const podYaml = (image: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: app\n      image: ${image}\n`;
const deployment = (image: string): Deployment => ({
  name: 'web',
  namespace: 'default',
  nodegroup: 'default',
  pod: { kind: 'Pod' },
  podYaml: podYaml(image),
  strategy: DEFAULT_STRATEGY,
  warnings: [],
});
const rev = (image: string) => podRevision(podPayloadKey('default', podYaml(image)));

describe('deployAndWait', () => {
  let dir: string;
  let store: LocalDirectoryObjectStore;
  let reporter: RecordingReporter;
  let progress: string[];
  let t: number;
  /** Runs at each wait step: plays the nodes, writing their receipts. */
  let nodes: (step: number) => Promise<void>;
  let step: number;
  const deps = (image: string): RolloutDeps => ({
    prepare: () => Promise.resolve(deployment(image)),
    openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store }),
    reporter,
    progress: (line) => progress.push(line),
  });
  const wait = {
    pollMs: 1_000,
    now: () => new Date(t),
    sleep: async (ms: number) => {
      t += ms;
      await nodes(++step);
    },
  };
  const index = async () => parseIndex((await store.get(INDEX_KEY)).body);

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-rollout-'));
    store = new LocalDirectoryObjectStore(dir);
    reporter = new RecordingReporter();
    progress = [];
    t = Date.now();
    step = 0;
    nodes = () => Promise.resolve();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('returns once every live node reports the new revision Ready, with progress', async () => {
    await writeReceipt(store, 'node-a', []);
    await writeReceipt(store, 'node-b', []);
    nodes = async (s) => {
      if (s === 1) await writeReceipt(store, 'node-a', [row(rev('v1'), { ready: false })]);
      if (s === 2) {
        await writeReceipt(store, 'node-a', [row(rev('v1'))]);
        await writeReceipt(store, 'node-b', [row(rev('v1'))]);
      }
    };
    const result = await deployAndWait(deps('v1'), { timeoutMs: 60_000, wait });
    expect(result.wait).toMatchObject({ ok: true, message: `web ${rev('v1')}: 2/2 nodes ready` });
    expect(progress).toEqual([
      `web ${rev('v1')}: 0/2 nodes ready; waiting for node-a (not applied yet); node-b (not applied yet)`,
      `web ${rev('v1')}: 0/2 nodes ready; waiting for node-a (not Ready); node-b (not applied yet)`,
      `web ${rev('v1')}: 2/2 nodes ready`,
    ]);
    expect(reporter.results).toEqual(['default/web']);
  });

  it('fails naming each node and its reason, and rolls back to the replaced entry', async () => {
    await commitDeployment(store, { name: 'web', nodegroup: 'default', podYaml: podYaml('v1') });
    const v1Entry = (await index())['default/web'];
    await writeReceipt(store, 'node-a', [row(rev('v1'))]);
    let rolledBack = false;
    nodes = async () => {
      const current = (await index())['default/web'];
      rolledBack = current?.pod === v1Entry?.pod;
      await writeReceipt(store, 'node-a', [
        rolledBack
          ? row(rev('v1'))
          : row(rev('bad'), {
              ready: false,
              reason: 'ImagePullBackOff (container app): not found',
            }),
      ]);
    };
    const err = (await deployAndWait(deps('bad'), {
      timeoutMs: 5_000,
      rollbackOnFailure: true,
      wait,
    }).catch((e: unknown) => e)) as RolloutFailedError;
    expect(err).toBeInstanceOf(RolloutFailedError);
    expect(err.message).toContain(
      'not ready after 5 s on node-a (ImagePullBackOff (container app): not found)',
    );
    expect(err.message).toContain(
      `rolled back to ${rev('v1')}, and that is done: web ${rev('v1')}: 1/1 nodes ready`,
    );
    expect(err.hint).toContain('podmin status web -g default');
    expect((await index())['default/web']).toEqual(v1Entry);
    expect(rolledBack).toBe(true);
    // Both commits replaced an entry, and history holds each: v1 by bad, then bad by v1.
    const records = await readHistory(store, 'default', 'web');
    expect(records.map(({ record: r }) => [r.action, r.replaced.pod, r.replacement?.pod])).toEqual([
      ['deploy', v1Entry?.pod, podPayloadKey('default', podYaml('bad'))],
      ['rollback', podPayloadKey('default', podYaml('bad')), v1Entry?.pod],
    ]);
  });

  it('deletes a deployment that was new when its wait fails, and waits until nodes drop it', async () => {
    await writeReceipt(store, 'node-a', []);
    nodes = async () => {
      const present = (await index())['default/web'] !== undefined;
      await writeReceipt(store, 'node-a', present ? [row(rev('bad'), { ready: false })] : []);
    };
    const err = (await deployAndWait(deps('bad'), {
      timeoutMs: 3_000,
      rollbackOnFailure: true,
      wait,
    }).catch((e: unknown) => e)) as RolloutFailedError;
    expect(err.message).toContain('deleted it, and that is done: web removed: 1/1 nodes ready');
    expect(await index()).toEqual({});
  });

  it('does not roll back over a newer deploy by someone else', async () => {
    await commitDeployment(store, { name: 'web', nodegroup: 'default', podYaml: podYaml('v1') });
    await writeReceipt(store, 'node-a', [row(rev('v1'))]);
    nodes = async (s) => {
      if (s === 1)
        await commitDeployment(store, {
          name: 'web',
          nodegroup: 'default',
          podYaml: podYaml('v3'),
        });
    };
    const err = (await deployAndWait(deps('bad'), {
      timeoutMs: 2_000,
      rollbackOnFailure: true,
      wait,
    }).catch((e: unknown) => e)) as RolloutFailedError;
    expect(err.message).toContain('not rolled back: the index no longer holds');
    expect((await index())['default/web']?.pod).toBe(podPayloadKey('default', podYaml('v3')));
  });

  it('says so when no node is live, and when Ready cannot be known', async () => {
    await writeReceipt(store, 'node-old', [], { heartbeatSeconds: 1 });
    t += 10_000;
    await expect(deployAndWait(deps('v1'), { timeoutMs: 2_000, wait })).rejects.toThrow(
      'no live node in NodeGroup default (1 stale or unreadable)',
    );
    await writeReceipt(store, 'node-a', [row(rev('v1'), { ready: null, restarts: null })], {
      kubelet: 'absent',
    });
    await expect(deployAndWait(deps('v1'), { timeoutMs: 60_000, wait })).rejects.toThrow(
      'applied on node-a, but Ready is unknown there (kubelet Pods API absent; no node stack?)',
    );
  });

  describe("with the leader's rollout state", () => {
    const pod = (image: string) => podPayloadKey('default', podYaml(image));
    const writeState = (rollout: DeploymentRollout) =>
      store.put(
        ROLLOUT_STATE_KEY,
        serializeRolloutState({ schema: 1, deployments: { 'default/web': rollout } }),
      );
    const halt = {
      node: 'node-b',
      reason: 'Pod not available within 5m0s: CrashLoopBackOff (container app)',
      time: '2024-01-01T00:05:00.000Z',
    };

    it('shows the waves while the leader admits nodes', async () => {
      await writeReceipt(store, 'node-a', []);
      await writeReceipt(store, 'node-b', []);
      nodes = async (s) => {
        await writeState({ ...newRollout(pod('v1')), admitted: { 'node-a': halt.time } });
        if (s >= 1) await writeReceipt(store, 'node-a', [row(rev('v1'))]);
        if (s >= 2) await writeReceipt(store, 'node-b', [row(rev('v1'))]);
      };
      await deployAndWait(deps('v1'), { timeoutMs: 60_000, wait });
      expect(progress.filter((l) => l.startsWith('web: '))).toEqual([
        'web: 1/2 updated, 1 available',
        'web: 2/2 updated, 2 available',
      ]);
    });

    it('fails at once naming the node and its reason when the rollout to the commit halts, then rolls back', async () => {
      await commitDeployment(store, { name: 'web', nodegroup: 'default', podYaml: podYaml('v1') });
      const v1Entry = (await index())['default/web'];
      await writeReceipt(store, 'node-a', [row(rev('v1'))]);
      await writeReceipt(store, 'node-b', [row(rev('v1'))]);
      // A halt of an earlier target is not this commit's.
      await writeState({ ...newRollout(pod('v1')), halted: halt });
      nodes = async (s) => {
        const current = (await index())['default/web'];
        if (s === 1 && current?.pod === pod('bad'))
          await writeState({ ...newRollout(pod('bad')), halted: halt });
      };
      const err = (await deployAndWait(deps('bad'), {
        timeoutMs: 60_000,
        rollbackOnFailure: true,
        wait,
      }).catch((e: unknown) => e)) as RolloutFailedError;
      expect(err).toBeInstanceOf(RolloutFailedError);
      expect(err.message).toContain(
        'waiting for default/web: rollout halted: node node-b: Pod not available within 5m0s: CrashLoopBackOff (container app); rolled back to',
      );
      expect(err.message).toContain(`and that is done: web ${rev('v1')}: 2/2 nodes ready`);
      expect(step).toBe(1);
      expect((await index())['default/web']).toEqual(v1Entry);
    });

    it('warns once about a malformed state and waits on the receipts alone', async () => {
      await store.put(ROLLOUT_STATE_KEY, 'not json');
      await writeReceipt(store, 'node-a', []);
      nodes = async (s) => {
        if (s >= 2) await writeReceipt(store, 'node-a', [row(rev('v1'))]);
      };
      await deployAndWait(deps('v1'), { timeoutMs: 60_000, wait });
      expect(reporter.warnings).toEqual([
        expect.stringContaining(`Ignoring the rollout state ${ROLLOUT_STATE_KEY}`) as string,
      ]);
    });
  });
});
