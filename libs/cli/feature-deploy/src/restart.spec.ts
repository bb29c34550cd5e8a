import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { readPodPayload } from '@podmin/data-access-desired-state';
import { INDEX_KEY, parseIndex, podPayloadKey, revisionOf } from '@podmin/util-desired-state';
import { RESTARTED_AT_ANNOTATION } from '@podmin/util-rollout';
import { podRevision } from '@podmin/util-receipts';
import { readyPod, snapshot, writeReceipt } from './__fixtures__/receipts';
import { commitDeployment } from './commit';
import { readHistory } from './history';
import { restartDeployment, restartRollout } from './restart';

const podYaml = (image: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    team: web\n  name: web\nspec:\n  containers:\n    - image: ${image}\n      name: app\n`;
const web = { nodegroup: 'default', name: 'web' };
const at = new Date('2024-05-06T07:08:09.123Z');
const service = { name: 'web', namespace: 'default', yaml: 'kind: Service\n' };

/** A local bucket whose next index write first lets `race` (another deploy) run. */
class RacingStore extends LocalDirectoryObjectStore {
  race: (() => Promise<void>) | undefined;
  override async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    const race = this.race;
    if (key === INDEX_KEY && race !== undefined) {
      this.race = undefined;
      await race();
    }
    return super.putIfMatch(key, body, etag);
  }
}

describe('rollout restart', () => {
  let dir: string;
  let store: RacingStore;
  const index = async () => parseIndex((await store.get(INDEX_KEY)).body);

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-restart-'));
    store = new RacingStore(dir);
    await commitDeployment(store, { ...web, podYaml: podYaml('hello:v1'), service });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('commits the same template with restartedAt set, replacing only the pod, with history', async () => {
    const before = (await index())['default/web'];
    const result = await restartDeployment(store, web, { now: () => at });
    const after = (await index())['default/web'];
    expect(after).toEqual({ ...before, pod: result.entry.pod });
    expect(after?.service).toBe(before?.service);
    expect(result).toMatchObject({
      changed: true,
      previous: before,
      from: revisionOf(before!),
      revision: podRevision(result.entry.pod),
      restartedAt: '2024-05-06T07:08:09.123Z',
    });
    expect(result.revision).not.toBe(result.from);
    // The new payload passes the agents' strict parser, canonical: its key is its digest.
    const payload = await readPodPayload(store, result.entry.pod);
    expect(payload.pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web',
        annotations: { team: 'web', [RESTARTED_AT_ANNOTATION]: '2024-05-06T07:08:09.123Z' },
      },
      spec: { containers: [{ name: 'app', image: 'hello:v1' }] },
    });
    expect(result.entry.pod).toBe(
      podPayloadKey('default', (await store.get(result.entry.pod)).body),
    );
    const records = await readHistory(store, 'default', 'web');
    expect(records.map(({ record: r }) => [r.action, r.replaced, r.replacement])).toEqual([
      ['deploy', before, after],
    ]);
  });

  it('refuses a deployment that is not in the index, writing nothing', async () => {
    const before = await snapshot(store);
    await expect(
      restartDeployment(store, { nodegroup: 'default', name: 'nope' }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'restarting default/nope: no such deployment in the desired-state index',
    });
    expect(await snapshot(store)).toEqual(before);
  });

  it('commits nothing when another deploy replaces the entry meanwhile, and keeps other changes', async () => {
    store.race = async () => {
      await commitDeployment(store, { ...web, podYaml: podYaml('hello:v2'), service });
    };
    await expect(restartDeployment(store, web, { now: () => at })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect((await index())['default/web']?.pod).toBe(podPayloadKey('default', podYaml('hello:v2')));
    // A race on another entry only rereads: the restart still lands.
    store.race = async () => {
      await commitDeployment(store, { nodegroup: 'default', name: 'api', podYaml: podYaml('a') });
    };
    const result = await restartDeployment(store, web, { now: () => at });
    expect(result.attempts).toBe(2);
    expect(Object.keys(await index()).sort()).toEqual(['default/api', 'default/web']);
  });

  it('reports what it did and, with a wait, waits like deploy --wait', async () => {
    const reporter = new RecordingReporter();
    const progress: string[] = [];
    let t = at.getTime();
    let revision = '';
    await writeReceipt(store, 'node-a', []);
    const result = await restartRollout(
      {
        openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store }),
        reporter,
        progress: (line) => progress.push(line),
      },
      web,
      {
        now: () => new Date(t),
        waitFor: {
          timeoutMs: 60_000,
          wait: {
            pollMs: 1_000,
            now: () => new Date(t),
            sleep: async (ms) => {
              t += ms;
              revision = podRevision((await index())['default/web']?.pod ?? '');
              await writeReceipt(store, 'node-a', [readyPod(revision)]);
            },
          },
        },
      },
    );
    expect(reporter.results).toEqual([result.revision]);
    expect(reporter.infos[0]).toMatch(
      new RegExp(
        `^Restarted default/web: revision ${result.from} → ${result.revision} \\(podmin\\.dev/restartedAt=`,
      ),
    );
    expect(result.wait).toMatchObject({ ok: true });
    expect(progress.at(-1)).toBe(`web ${result.revision}: 1/1 nodes ready`);
  });
});
