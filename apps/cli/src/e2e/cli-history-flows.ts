import { parseHistoryRecord, revisionOf, type IndexEntry } from '@podmin/util-desired-state';
import { deployArgs, type CliRun } from './cli-harness';
import type { StoreUnderTest } from './cli-flows';

// The black-box flows of deployment history: deploys and deletes record it, `history` lists
// it, `rollback` restores an entry byte for byte, and concurrent deploys lose no record.

/** What the history flows use of their enclosing `describeCliFlows` block, read at test time. */
export interface HistoryFlowContext {
  /** Runs podmin in the block's sandbox with the store's environment. */
  podmin: (...args: string[]) => Promise<CliRun>;
  /** The store under test, once the block's `beforeAll` has set it up. */
  store: () => StoreUnderTest;
}

/** Registers the history and rollback flows in the enclosing `describe` block. */
export function registerHistoryFlows({ podmin, store }: HistoryFlowContext): void {
  const indexOf = async (): Promise<Record<string, IndexEntry>> =>
    JSON.parse((await store().read('deployments/index.json')).toString()) as Record<
      string,
      IndexEntry
    >;
  const historyKeys = async (prefix: string): Promise<string[]> =>
    Object.keys(await store().snapshot())
      .filter((k) => k.startsWith(prefix))
      .sort();
  type HistoryJson = Array<{
    revision: string | null;
    time: string | null;
    action: string | null;
    current: boolean;
    images: string[] | null;
    pod: string | null;
  }>;

  it('records history on deploy and delete, lists it and rolls back byte for byte', async () => {
    const deployV1 = await podmin(...deployArgs('app', 'hist', '--image', 'hello:v1'));
    expect(deployV1.code).toBe(0);
    const indexWithV1 = (await store().read('deployments/index.json')).toString();
    const v1 = (await indexOf())['hist/app'] as IndexEntry;
    expect(await historyKeys('history/hist/app/')).toEqual([]);
    expect((await podmin(...deployArgs('app', 'hist', '--image', 'hello:v2'))).code).toBe(0);
    const v2 = (await indexOf())['hist/app'] as IndexEntry;
    const [recordKey] = await historyKeys('history/hist/app/');
    expect(recordKey).toMatch(/^history\/hist\/app\/\d{8}T\d{9}Z-[0-9a-f]{16}\.json$/);
    expect(parseHistoryRecord(recordKey!, await store().read(recordKey!))).toMatchObject({
      deployment: 'hist/app',
      action: 'deploy',
      replaced: v1,
      replacement: v2,
    });

    const table = await podmin('history', 'app', '-g', 'hist');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^REVISION\s+TIME\s+ACTION\s+IMAGES\s+CURRENT$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${revisionOf(v2)}\\s+\\S+Z\\s+deploy\\s+registry\\.podmin\\.internal/apps/hello:v2\\s+\\*$`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(`^${revisionOf(v1)}\\s+-\\s+-\\s+registry\\.podmin\\.internal/apps/hello:v1$`),
    );

    const rollback = await podmin('rollback', 'app', '-g', 'hist', '--no-pin');
    expect(rollback.code).toBe(0);
    expect(rollback.stdout).toBe(`${revisionOf(v1)}\n`);
    expect(rollback.stderr).toContain(
      `Rolled back hist/app from revision ${revisionOf(v2)} to revision ${revisionOf(v1)}`,
    );
    expect((await store().read('deployments/index.json')).toString()).toBe(indexWithV1);
    expect(JSON.stringify((await indexOf())['hist/app'])).toBe(JSON.stringify(v1));

    expect((await podmin('delete', 'app', '-g', 'hist')).code).toBe(0);
    // `list` stays the inventory: a deleted deployment is gone from it, history keeps it.
    const listed = JSON.parse((await podmin('list', '-o', 'json')).stdout) as Array<{
      nodegroup: string;
    }>;
    expect(listed.filter((r) => r.nodegroup === 'hist')).toEqual([]);
    const json = JSON.parse(
      (await podmin('history', 'app', '-g', 'hist', '-o', 'json')).stdout,
    ) as HistoryJson;
    expect(json.map((r) => [r.revision, r.action, r.current])).toEqual([
      [null, 'delete', false],
      [revisionOf(v1), 'rollback', false],
      [revisionOf(v2), 'deploy', false],
      [revisionOf(v1), null, false],
    ]);
    expect(json[1]?.images).toEqual(['registry.podmin.internal/apps/hello:v1']);
    const records = await historyKeys('history/hist/app/');
    expect(records).toHaveLength(3);

    // Restoring the deleted deployment by a prefix of its revision, then back to v2.
    const restore = await podmin(
      'rollback',
      'app',
      '-g',
      'hist',
      '--to',
      revisionOf(v2).slice(0, 7),
      '--no-pin',
    );
    expect(restore.code).toBe(0);
    expect(restore.stderr).toContain('from deleted to revision');
    expect((await indexOf())['hist/app']).toEqual(v2);
    expect(await historyKeys('history/hist/app/')).toHaveLength(3);
  });

  it('refuses bad history and rollback input with a clear error and leaves the bucket untouched', async () => {
    expect((await podmin(...deployArgs('bad', 'hist', '--image', 'hello:v1'))).code).toBe(0);
    expect((await podmin(...deployArgs('bad', 'hist', '--image', 'hello:v2'))).code).toBe(0);
    const cases: Array<[string, string[], RegExp]> = [
      [
        'an unknown revision',
        ['rollback', 'bad', '-g', 'hist', '--to', 'ffffffffffff'],
        /no revision ffffffffffff in its history; known revisions: [0-9a-f]{12}, [0-9a-f]{12}/,
      ],
      [
        'a malformed revision',
        ['rollback', 'bad', '-g', 'hist', '--to', 'v1'],
        /--to "v1" is not a revision; allowed: 4 to 128 hex/,
      ],
      [
        'no such deployment',
        ['rollback', 'ghost', '-g', 'hist'],
        /hist\/ghost: no such deployment/,
      ],
      [
        'no such deployment in history',
        ['history', 'ghost', '-g', 'hist'],
        /hist\/ghost: no such deployment/,
      ],
    ];
    for (const [label, args, pattern] of cases) {
      const before = await store().snapshot();
      const result = await podmin(...args);
      expect({ label, code: result.code, stdout: result.stdout }).toEqual({
        label,
        code: 1,
        stdout: '',
      });
      expect(result.stderr).toMatch(/^Error: /m);
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(await store().snapshot()).toEqual(before);
    }
    // A malformed history object: both commands name it and what is allowed; nothing changes.
    const bad = 'history/hist/bad/20260101T000000000Z-0000000000000000.json';
    await store().write(bad, '{"deployment": "hist/bad", "deployment": "hist/bad"}\n');
    const before = await store().snapshot();
    for (const args of [
      ['rollback', 'bad', '-g', 'hist'],
      ['history', 'bad', '-g', 'hist'],
    ]) {
      const result = await podmin(...args);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `Error: reading history record ${bad}: deployment: duplicate key`,
      );
      expect(result.stderr).toMatch(/Hint: .*nothing was changed/);
      expect(await store().snapshot()).toEqual(before);
    }
    await store().write(bad, JSON.stringify({ deployment: 'hist/bad', by: 'me' }));
    const unknown = await podmin('rollback', 'bad', '-g', 'hist');
    expect(unknown.stderr).toMatch(
      /by: unknown field; allowed: deployment, action, time, replaced, replacement/,
    );
  });

  it('keeps all twenty history records when twenty deploys of one deployment run at once', async () => {
    expect((await podmin(...deployArgs('conc', 'hist', '--image', 'hello:c-first'))).code).toBe(0);
    const first = (await indexOf())['hist/conc'] as IndexEntry;
    const tags = Array.from({ length: 20 }, (_, i) => `c${i}`);
    const results = await Promise.all(
      tags.map((t) => podmin(...deployArgs('conc', 'hist', '--image', `hello:${t}`))),
    );
    for (const r of results) expect(r).toMatchObject({ code: 0 });
    const keys = await historyKeys('history/hist/conc/');
    expect(keys).toHaveLength(20);
    const records = await Promise.all(
      keys.map(async (k) => parseHistoryRecord(k, await store().read(k))),
    );
    // Each commit replaced exactly the entry before it: the records form one chain from the
    // first deploy through all twenty to the entry the index holds now.
    const next = new Map(records.map((r) => [r.replaced.pod, r.replacement!.pod]));
    expect(next.size).toBe(20);
    const seen: string[] = [];
    for (let pod: string | undefined = first.pod; pod !== undefined; pod = next.get(pod))
      seen.push(pod);
    expect(seen).toHaveLength(21);
    expect(seen.at(-1)).toBe((await indexOf())['hist/conc']?.pod);
    const images = await Promise.all(
      seen.slice(1).map(async (p) => (await store().read(p)).toString()),
    );
    for (const t of tags)
      expect(images.filter((y) => y.includes(`apps/hello:${t}\n`))).toHaveLength(1);
    const json = JSON.parse(
      (await podmin('history', 'conc', '-g', 'hist', '--limit', '0', '-o', 'json')).stdout,
    ) as HistoryJson;
    expect(json).toHaveLength(21);
    expect(json[0]?.current).toBe(true);
    expect(json.at(-1)?.pod).toBe(first.pod);
  });
}
