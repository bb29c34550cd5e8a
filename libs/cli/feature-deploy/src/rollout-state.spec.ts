import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { podPayloadKey } from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import {
  ROLLOUT_STATE_KEY,
  newRollout,
  parseRolloutState,
  serializeRolloutState,
  type DeploymentRollout,
} from '@podmin/util-rollout';
import { snapshot } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import {
  pauseRollout,
  readRolloutStateForDisplay,
  resumeRollout,
  updateRolloutState,
} from './rollout-state';

const podYaml = (image: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: app\n      image: ${image}\n`;
const web = { nodegroup: 'default', name: 'web' };
const noWait = { backoff: () => Promise.resolve() };

/** A local bucket whose next rollout-state write first lets `race` (another writer) run. */
class RacingStore extends LocalDirectoryObjectStore {
  race: (() => Promise<void>) | undefined;
  override async putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    await this.runRace(key);
    return super.putIfAbsent(key, body);
  }
  override async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    await this.runRace(key);
    return super.putIfMatch(key, body, etag);
  }
  private async runRace(key: string): Promise<void> {
    const race = this.race;
    if (key !== ROLLOUT_STATE_KEY || race === undefined) return;
    this.race = undefined;
    await race();
  }
}

describe('rollout pause and resume', () => {
  let dir: string;
  let store: RacingStore;
  const state = async () => parseRolloutState((await store.get(ROLLOUT_STATE_KEY)).body);
  const writeState = (deployments: Record<string, DeploymentRollout>) =>
    store.put(ROLLOUT_STATE_KEY, serializeRolloutState({ schema: 1, deployments }));
  const v1 = podPayloadKey('default', podYaml('hello:v1'));

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-rollout-state-'));
    store = new RacingStore(dir);
    await commitDeployment(store, { ...web, podYaml: podYaml('hello:v1') });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('pause creates the entry toward the index entry when the state is absent, create-only', async () => {
    const result = await pauseRollout(store, web, noWait);
    expect(result).toMatchObject({ key: 'default/web', changed: true });
    expect(result.message).toBe(
      'rollout of web paused: nodes already moving finish; no new node moves until `podmin rollout resume web -g default`',
    );
    expect(await state()).toEqual({
      schema: 1,
      deployments: { 'default/web': newRollout(v1, true) },
    });
    const again = await pauseRollout(store, web, noWait);
    expect(again.changed).toBe(false);
    expect(again.message).toContain('already paused');
  });

  it('pause keeps what the leader recorded and rereads after losing a race to it', async () => {
    await writeState({
      'default/web': { ...newRollout(v1), admitted: { 'node-a': '2024-01-01T00:00:00.000Z' } },
    });
    store.race = async () => {
      await writeState({
        'default/web': {
          ...newRollout(v1),
          admitted: { 'node-a': '2024-01-01T00:00:00.000Z', 'node-b': '2024-01-01T00:01:00.000Z' },
        },
        'default/api': newRollout('pods/default/api.yaml'),
      });
    };
    const result = await pauseRollout(store, web, noWait);
    expect(result.changed).toBe(true);
    const after = await state();
    expect(after.deployments['default/web']).toEqual({
      ...newRollout(v1, true),
      admitted: { 'node-a': '2024-01-01T00:00:00.000Z', 'node-b': '2024-01-01T00:01:00.000Z' },
    });
    expect(after.deployments['default/api']).toEqual(newRollout('pods/default/api.yaml'));
  });

  it('resume clears a pause; after a halt it clears the halt and starts a new attempt', async () => {
    await pauseRollout(store, web, noWait);
    const resumed = await resumeRollout(store, web, noWait);
    expect(resumed).toMatchObject({ changed: true, rollout: newRollout(v1, false) });
    expect(resumed.message).toBe('rollout of web resumed: nodes move on in waves');

    const halt = {
      node: 'i-abc',
      reason: 'Pod not available within 5m0s',
      time: '2024-01-01T00:05:00.000Z',
    };
    await writeState({ 'default/web': { ...newRollout(v1, true), halted: halt } });
    const afterHalt = await resumeRollout(store, web, noWait);
    expect(afterHalt.clearedHalt).toEqual(halt);
    expect(afterHalt.message).toBe(
      'rollout of web resumed after its halt on node i-abc (Pod not available within 5m0s): attempt 2, nodes that failed try again',
    );
    expect((await state()).deployments['default/web']).toEqual({
      ...newRollout(v1),
      attempt: 2,
    });

    const nothing = await resumeRollout(store, web, noWait);
    expect(nothing).toMatchObject({ changed: false });
    expect(nothing.message).toContain('nothing to resume');
  });

  it('refuses a deployment that is not in the index, writing nothing', async () => {
    const before = await snapshot(store);
    for (const run of [pauseRollout, resumeRollout]) {
      await expect(
        run(store, { nodegroup: 'default', name: 'nope' }, noWait),
      ).rejects.toMatchObject({
        code: 'NOT_FOUND',
        message: expect.stringContaining('default/nope: no such deployment') as string,
        hint: 'run `podmin list` to see committed deployments',
      });
    }
    await expect(store.get(ROLLOUT_STATE_KEY)).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
    expect(await snapshot(store)).toEqual(before);
  });

  it('refuses to rewrite a malformed state; display reads warn and go on', async () => {
    await store.put(ROLLOUT_STATE_KEY, '{"schema": 2}');
    await expect(pauseRollout(store, web, noWait)).rejects.toMatchObject({
      code: 'INVALID_MANIFEST',
      message: `updating ${ROLLOUT_STATE_KEY}: it is malformed`,
    });
    expect((await store.get(ROLLOUT_STATE_KEY)).body.toString()).toBe('{"schema": 2}');
    const warnings: string[] = [];
    expect(await readRolloutStateForDisplay(store, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('Ignoring the rollout state') as string]);
  });

  it('gives up after a bounded number of lost races', async () => {
    let writes = 0;
    const loser = {
      get: (key: string, options?: { maxBytes?: number }) => store.get(key, options),
      putIfAbsent: () => {
        writes++;
        return Promise.reject(new PodminError('PRECONDITION_FAILED', 'lost'));
      },
      putIfMatch: () => Promise.reject(new Error('unused')),
    };
    await expect(
      updateRolloutState(loser, (s) => s, { maxAttempts: 3, ...noWait }),
    ).rejects.toMatchObject({ code: 'CONFLICT_RETRIES_EXHAUSTED' });
    expect(writes).toBe(3);
  });
});
