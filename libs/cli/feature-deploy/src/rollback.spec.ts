import { RecordingReporter } from '@podmin/cli-util-io';
import { InMemoryObjectStore } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  parseHistoryRecord,
  parseIndex,
  podPayloadKey,
  revisionOf,
  sha512Hex,
  type IndexEntry,
} from '@podmin/util-desired-state';
import { buildDeployment, parseImageFlags, renderBuiltInManifest } from '@podmin/util-manifest';
import { commitDeployment, deleteDeployment, recommitEntry, type CommitOptions } from './commit';
import { deploy, deploymentPayloads } from './deploy';
import { deploymentHistory, historyWithImages, rollbackDeployment } from './rollback';
import { readHistory, recordHistory } from './history';

/** Payloads of the built-in manifest for `web` in NodeGroup default with one image. */
function payloads(image: string, service = true) {
  const text = renderBuiltInManifest({
    name: 'web',
    nodegroup: 'default',
    images: parseImageFlags([image]),
    ...(service ? { service: true } : {}),
  });
  return deploymentPayloads(buildDeployment(text, { source: 'test.yaml' }));
}

/** A clock one second later per record written, and sequential ids. */
function clock(): Required<Pick<CommitOptions, 'now' | 'randomId' | 'backoff'>> {
  let t = Date.parse('2026-12-01T10:00:00.000Z');
  let id = 0;
  return {
    now: () => new Date((t += 1000)),
    randomId: () => (id++).toString(16).padStart(16, '0'),
    backoff: () => Promise.resolve(),
  };
}

/** Every object's bytes, to prove a refused command changed nothing. */
function snapshot(store: InMemoryObjectStore): Map<string, string> {
  return new Map([...store.objects].map(([k, v]) => [k, v.body.toString('base64')]));
}

const image = (tag: string) => `registry.podmin.internal/apps/hello:${tag}`;

describe('history of commits', () => {
  it('records each replaced entry, with what replaced it, and none for a first deploy', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    expect(a.previous).toBeUndefined();
    expect(a.history).toBeUndefined();
    const b = await commitDeployment(store, payloads('hello:v2'), opts);
    expect(b.previous).toEqual(a.entry);
    expect(b.history).toEqual({
      recorded: true,
      key: 'history/default/web/20261201T100001000Z-0000000000000000.json',
    });
    const removed = await deleteDeployment(store, 'default', 'web', opts);
    expect(removed.previous).toEqual(b.entry);
    const records = (await readHistory(store, 'default', 'web')).map((r) => r.record);
    expect(records).toEqual([
      {
        deployment: 'default/web',
        action: 'deploy',
        time: '2026-12-01T10:00:01.000Z',
        replaced: a.entry,
        replacement: b.entry,
      },
      {
        deployment: 'default/web',
        action: 'delete',
        time: '2026-12-01T10:00:02.000Z',
        replaced: b.entry,
        replacement: null,
      },
    ]);
    const unchanged = await commitDeployment(store, payloads('hello:v2'), opts);
    expect(unchanged.previous).toBeUndefined();
    const again = await commitDeployment(store, payloads('hello:v2'), opts);
    expect(again).toMatchObject({ changed: false });
    expect(again.previous).toBeUndefined();
    expect(await readHistory(store, 'default', 'web')).toHaveLength(2);
  });

  it('records the entry the winning attempt replaced when another writer raced it', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    const raced = await commitDeployment(store, payloads('hello:v3'), opts);
    await commitDeployment(store, payloads('hello:v1'), opts);
    let once = false;
    store.beforeConditionalWrite = (key) => {
      if (key === INDEX_KEY && !once) {
        once = true;
        store.store(INDEX_KEY, `{"default/web": ${JSON.stringify(raced.entry)}}\n`);
      }
    };
    const b = await commitDeployment(store, payloads('hello:v2'), opts);
    expect(b.attempts).toBe(2);
    expect(b.previous).toEqual(raced.entry);
    expect(b.previous).not.toEqual(a.entry);
    const last = (await readHistory(store, 'default', 'web')).at(-1);
    expect(last?.record.replaced).toEqual(raced.entry);
  });

  it('keeps the commit and warns naming the record when the history write keeps failing', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    store.beforeConditionalWrite = (key) => {
      if (key.startsWith('history/'))
        throw new PodminError('BUCKET_UNAVAILABLE', `writing ${key}: the bucket is unreachable`);
    };
    const reporter = new RecordingReporter();
    const result = await deploy(
      {
        prepare: () =>
          Promise.resolve(
            buildDeployment(
              renderBuiltInManifest({
                name: 'web',
                nodegroup: 'default',
                images: parseImageFlags(['hello:v2']),
                service: true,
              }),
              { source: 'test.yaml' },
            ),
          ),
        openBucket: () => Promise.resolve({ context: { cluster: 'demo' }, store }),
        reporter,
        // hello:v2 is never pushed here: this test is about history, not pinning (pin.spec.ts).
        pin: false,
      },
      opts,
    );
    expect(result.changed).toBe(true);
    expect(result.history).toMatchObject({ recorded: false });
    expect(parseIndex(store.objects.get(INDEX_KEY)!.body)['default/web']).toEqual(result.entry);
    expect(store.calls.filter((c) => c.startsWith('putIfAbsent history/'))).toHaveLength(3);
    expect(reporter.warnings).toHaveLength(1);
    expect(reporter.warnings[0]).toContain('The change to default/web is committed');
    expect(reporter.warnings[0]).toContain(`revision ${revisionOf(a.entry)}`);
    expect(reporter.warnings[0]).toContain('the bucket is unreachable');
    expect(reporter.infos.at(-1)).toMatch(/^Committed: default\/web/);
  });

  it('takes a new id on a collision and accepts its own earlier write', async () => {
    const store = new InMemoryObjectStore();
    const a = await commitDeployment(store, payloads('hello:v1'), clock());
    const b = await commitDeployment(store, payloads('hello:v2'), clock());
    const record = {
      deployment: 'default/web',
      action: 'deploy' as const,
      time: '2026-12-01T10:00:05.000Z',
      replaced: a.entry,
      replacement: b.entry,
    };
    const taken = 'history/default/web/20261201T100005000Z-aaaaaaaaaaaaaaaa.json';
    store.store(taken, 'someone else\n');
    const ids = ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'];
    const outcome = await recordHistory(store, record, { randomId: () => ids.shift()! });
    expect(outcome).toEqual({
      recorded: true,
      key: 'history/default/web/20261201T100005000Z-bbbbbbbbbbbbbbbb.json',
    });
    expect(store.objects.get(taken)?.body.toString()).toBe('someone else\n');
    // A round whose write landed but whose answer was lost: the retry finds its own bytes.
    let lost = true;
    store.beforeConditionalWrite = (key) => {
      if (lost && key.startsWith('history/')) {
        lost = false;
        throw new PodminError('BUCKET_UNAVAILABLE', 'connection reset');
      }
    };
    const retried = await recordHistory(
      store,
      { ...record, time: '2026-12-01T10:00:06.000Z' },
      { randomId: () => 'cccccccccccccccc' },
    );
    expect(retried.recorded).toBe(true);
    const key = 'history/default/web/20261201T100006000Z-cccccccccccccccc.json';
    expect(parseHistoryRecord(key, store.objects.get(key)!.body).time).toBe(
      '2026-12-01T10:00:06.000Z',
    );
  });
});

describe('deploymentHistory', () => {
  it('lists revisions newest first, marks the current one and shows images', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    const b = await commitDeployment(store, payloads('hello:v2'), opts);
    const history = await historyWithImages(store, 'default', 'web');
    expect(history.rows).toEqual([
      {
        revision: revisionOf(b.entry),
        time: '2026-12-01T10:00:01.000Z',
        action: 'deploy',
        current: true,
        entry: b.entry,
        images: [image('v2')],
      },
      {
        revision: revisionOf(a.entry),
        time: null,
        action: null,
        current: false,
        entry: a.entry,
        images: [image('v1')],
      },
    ]);
    await deleteDeployment(store, 'default', 'web', opts);
    const deleted = await deploymentHistory(store, 'default', 'web');
    expect(deleted.current).toBeUndefined();
    expect(deleted.rows.map((r) => [r.revision, r.action, r.current])).toEqual([
      [null, 'delete', false],
      [revisionOf(b.entry), 'deploy', false],
      [revisionOf(a.entry), null, false],
    ]);
    // Redeployed after the delete: nothing was replaced, so the index shows it, untimed.
    const c = await commitDeployment(store, payloads('hello:v3'), opts);
    const redeployed = await deploymentHistory(store, 'default', 'web');
    expect(redeployed.rows[0]).toMatchObject({
      revision: revisionOf(c.entry),
      time: null,
      current: true,
    });
  });

  it('follows commit order where concurrent deploys stamped their records out of it', async () => {
    const store = new InMemoryObjectStore();
    // Each record is stamped after its commit: here every later commit got an earlier time,
    // as when the processes of concurrent deploys reach their clocks in another order.
    let t = Date.parse('2026-12-01T10:00:00.000Z');
    let id = 0;
    const backwards: CommitOptions = {
      now: () => new Date((t -= 1000)),
      randomId: () => (id++).toString(16).padStart(16, '0'),
    };
    const entries = [];
    for (const tag of ['v1', 'v2', 'v3', 'v4', 'v2'])
      entries.push((await commitDeployment(store, payloads(`hello:${tag}`), backwards)).entry);
    const history = await deploymentHistory(store, 'default', 'web');
    // One row per commit, newest first: no untimed rows for links the time order breaks.
    expect(history.rows.map((r) => [r.revision, r.action, r.current])).toEqual([
      [revisionOf(entries[4] as IndexEntry), 'deploy', true],
      [revisionOf(entries[3] as IndexEntry), 'deploy', false],
      [revisionOf(entries[2] as IndexEntry), 'deploy', false],
      [revisionOf(entries[1] as IndexEntry), 'deploy', false],
      [revisionOf(entries[0] as IndexEntry), null, false],
    ]);
  });

  it('keeps the newest rows with a limit and reads only their payloads', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const entries: IndexEntry[] = [];
    for (const tag of ['v1', 'v2', 'v3', 'v4'])
      entries.push((await commitDeployment(store, payloads(`hello:${tag}`), opts)).entry);
    store.calls.length = 0;
    const limited = await historyWithImages(store, 'default', 'web', undefined, { limit: 2 });
    expect(limited.rows.map((r) => [r.revision, r.images])).toEqual([
      [revisionOf(entries[3]!), [image('v4')]],
      [revisionOf(entries[2]!), [image('v3')]],
    ]);
    expect(limited.omitted).toBe(2);
    // The Pod payloads of the rows left out are never read.
    expect(store.calls.filter((c) => c.includes(entries[0]!.pod))).toEqual([]);
    const all = await historyWithImages(store, 'default', 'web', undefined, { limit: 0 });
    expect(all.rows).toHaveLength(4);
    expect(all.omitted).toBe(0);
  });

  it('names the deployment when it has neither an entry nor history', async () => {
    const store = new InMemoryObjectStore();
    await expect(deploymentHistory(store, 'default', 'nope')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('default/nope: no such deployment') as unknown,
    });
  });
});

describe('rollbackDeployment', () => {
  async function threeRevisions(store: InMemoryObjectStore, opts: CommitOptions) {
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    const b = await commitDeployment(store, payloads('hello:v2'), opts);
    const c = await commitDeployment(store, payloads('hello:v3'), opts);
    return { a: a.entry, b: b.entry, c: c.entry };
  }

  it('re-commits the revision before the current one, byte for byte, and records it', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const first = await commitDeployment(store, payloads('hello:v1'), opts);
    const indexWithA = store.objects.get(INDEX_KEY)!.body.toString();
    const b = await commitDeployment(store, payloads('hello:v2'), opts);
    const result = await rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts);
    expect(result).toMatchObject({
      changed: true,
      revision: revisionOf(first.entry),
      from: revisionOf(b.entry),
      previous: b.entry,
    });
    expect(store.objects.get(INDEX_KEY)!.body.toString()).toBe(indexWithA);
    const last = (await readHistory(store, 'default', 'web')).at(-1)?.record;
    expect(last).toMatchObject({ action: 'rollback', replaced: b.entry, replacement: first.entry });
    // Rolling back again goes to the revision the rollback replaced.
    const back = await rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts);
    expect(back.revision).toBe(revisionOf(b.entry));
  });

  it('accepts a unique prefix with --to and restores a deleted deployment', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const { a, c } = await threeRevisions(store, opts);
    const to = revisionOf(a).slice(0, 6);
    const result = await rollbackDeployment(store, { nodegroup: 'default', name: 'web', to }, opts);
    expect(result.entry).toEqual(a);
    await deleteDeployment(store, 'default', 'web', opts);
    const restored = await rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts);
    expect(restored).toMatchObject({ from: null, revision: revisionOf(a) });
    const full = parsePodDigest(c.pod);
    const exact = await rollbackDeployment(
      store,
      { nodegroup: 'default', name: 'web', to: full },
      opts,
    );
    expect(exact.entry).toEqual(c);
    // Already current: verified, nothing written.
    const before = snapshot(store);
    const same = await rollbackDeployment(
      store,
      { nodegroup: 'default', name: 'web', to: full },
      opts,
    );
    expect(same.changed).toBe(false);
    expect(snapshot(store)).toEqual(before);
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const { a } = await threeRevisions(store, opts);
    const cases: Array<[string | undefined, string, string, RegExp]> = [
      [undefined, 'nope', 'NOT_FOUND', /default\/nope: no such deployment/],
      [
        'ffffffffffff',
        'web',
        'NOT_FOUND',
        /no revision ffffffffffff in its history; known revisions: /,
      ],
      ['xyz', 'web', 'INVALID_ARGUMENT', /--to "xyz" is not a revision; allowed: 4 to 128 hex/],
    ];
    const before = snapshot(store);
    for (const [to, name, code, message] of cases) {
      await expect(
        rollbackDeployment(
          store,
          { nodegroup: 'default', name, ...(to === undefined ? {} : { to }) },
          opts,
        ),
      ).rejects.toMatchObject({ code, message: expect.stringMatching(message) as unknown });
      expect(snapshot(store)).toEqual(before);
    }
    // A malformed record stops the rollback before anything is written.
    const bad = 'history/default/web/20261201T120000000Z-ffffffffffffffff.json';
    store.store(bad, '{"deployment": "default/web", "extra": true}\n');
    const tampered = snapshot(store);
    await expect(
      rollbackDeployment(store, { nodegroup: 'default', name: 'web', to: revisionOf(a) }, opts),
    ).rejects.toMatchObject({
      code: 'INVALID_MANIFEST',
      message: expect.stringContaining(`reading history record ${bad}`) as unknown,
    });
    expect(snapshot(store)).toEqual(tampered);
    store.store(bad, 'x'.repeat(20000));
    await expect(
      rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts),
    ).rejects.toMatchObject({ code: 'INVALID_MANIFEST' });
    store.objects.delete(bad);
    // A foreign object under the prefix is refused the same way.
    store.store('history/default/web/notes.txt', 'hi');
    await expect(
      rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts),
    ).rejects.toThrow(/must be history\/<nodegroup>/);
  });

  it('refuses an ambiguous prefix, naming the revisions it matches', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    // Two Pods whose digests share four hex characters (a comment varies the bytes cheaply).
    const base = payloads('hello:v1', false);
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const podYaml = `${base.podYaml}# ${i}\n`;
      const prefix = sha512Hex(podYaml).slice(0, 4);
      const other = seen.get(prefix);
      if (other !== undefined) pair = [other, podYaml];
      else seen.set(prefix, podYaml);
    }
    const x = await commitDeployment(store, { ...base, podYaml: pair[0] }, opts);
    const y = await commitDeployment(store, { ...base, podYaml: pair[1] }, opts);
    const prefix = revisionOf(x.entry).slice(0, 4);
    const before = snapshot(store);
    await expect(
      rollbackDeployment(store, { nodegroup: 'default', name: 'web', to: prefix }, opts),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(
        `revision prefix ${prefix} is ambiguous: it matches ${revisionOf(y.entry)}, ${revisionOf(x.entry)}`,
      ) as unknown,
    });
    expect(snapshot(store)).toEqual(before);
  });

  it('refuses when there is no earlier revision', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    await commitDeployment(store, payloads('hello:v1'), opts);
    await expect(
      rollbackDeployment(store, { nodegroup: 'default', name: 'web' }, opts),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('no revision before the current one') as unknown,
    });
  });
});

describe('recommitEntry', () => {
  it('verifies the payloads first and writes nothing when one is missing or damaged', async () => {
    const store = new InMemoryObjectStore();
    // Payloads name images by tag that are never pushed: rollback re-commits them byte for
    // byte with --no-pin (pinning at rollback is pin.spec.ts's).
    const opts = { ...clock(), pin: false };
    const a = await commitDeployment(store, payloads('hello:v1'), opts);
    await commitDeployment(store, payloads('hello:v2'), opts);
    store.objects.delete(a.entry.service!);
    const before = snapshot(store);
    await expect(recommitEntry(store, 'default/web', a.entry, opts)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `re-committing default/web: its payload ${a.entry.service} is not in the bucket`,
    });
    store.store(a.entry.pod, 'tampered');
    await expect(recommitEntry(store, 'default/web', a.entry, opts)).rejects.toMatchObject({
      code: 'INVALID_MANIFEST',
      message: expect.stringContaining(`its payload ${a.entry.pod} failed verification`) as unknown,
    });
    expect(store.objects.get(INDEX_KEY)!.body.toString('base64')).toBe(before.get(INDEX_KEY));
    expect([...snapshot(store).keys()]).toEqual([...before.keys()]);
    await expect(
      recommitEntry(store, 'edge/web', { pod: podPayloadKey('default', 'x') }, opts),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

function parsePodDigest(pod: string): string {
  return /([0-9a-f]{128})\.yaml$/.exec(pod)![1]!;
}
