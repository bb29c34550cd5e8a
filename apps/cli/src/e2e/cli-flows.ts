import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  parseHistoryRecord,
  revisionOf,
  serviceVip,
  sha512Hex,
  type IndexEntry,
} from '@podmin/util-desired-state';
import { deployArgs, type CliSandbox } from './cli-harness';
import { BAD_MANIFESTS, DAEMONSET_WITH_SERVICE } from './fixtures';

/** How a flow reaches and inspects one kind of bucket. */
export interface StoreUnderTest {
  /** Arguments of `podmin connect` after the cluster name. */
  connectArgs: string[];
  /** Extra environment for every CLI run (e.g. the emulator endpoint). */
  env: Record<string, string>;
  /** Every object in the bucket: key → content hash. */
  snapshot(): Promise<Record<string, string>>;
  /** One object's bytes. */
  read(key: string): Promise<Buffer>;
  /** Writes one object behind the CLI's back (a damaged or foreign object). */
  write(key: string, body: string): Promise<void>;
}

/** Registers the black-box flows against one store. */
export function describeCliFlows(
  name: string,
  setup: () => Promise<{ sandbox: CliSandbox; store: StoreUnderTest }>,
): void {
  describe(`podmin against ${name}`, () => {
    let sandbox: CliSandbox;
    let store: StoreUnderTest;
    const podmin = (...args: string[]) => sandbox.run(args, store.env);

    beforeAll(async () => {
      ({ sandbox, store } = await setup());
      const connected = await podmin('connect', 'demo', ...store.connectArgs);
      expect(connected.stderr).toContain('Connected to cluster demo');
      expect(connected.code).toBe(0);
    });
    afterAll(() => sandbox.cleanup());

    it('deploys, lists and deletes as a new user would', async () => {
      const init = await podmin('init', 'web', '-g', 'default', '--image', 'hello:v1', '--service');
      expect(init.code).toBe(0);
      const manifest = path.join(sandbox.cwd, 'daemonset.yaml');
      expect(fs.readFileSync(manifest, 'utf8')).toContain('kind: DaemonSet');

      const valid = await podmin('validate', '-f', 'daemonset.yaml');
      expect(valid.stdout).toBe(
        'valid: DaemonSet default/web for NodeGroup default, Service web (443→8443/TCP)\n',
      );

      const deploy = await podmin(...deployArgs('web', 'default', '-f', 'daemonset.yaml'));
      expect(deploy.code).toBe(0);
      expect(deploy.stdout).toBe('default/web\n');
      expect(deploy.stderr).toMatch(/Committed: default\/web .*does not mean the Pod is running/s);

      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { pod: string; service?: string }
      >;
      const entry = index['default/web'];
      expect(Object.keys(index)).toEqual(['default/web']);
      expect(entry?.pod).toMatch(/^nodegroups\/default\/pods\/sha512\/[0-9a-f]{128}\.yaml$/);
      expect(entry?.service).toMatch(/^services\/default\/web\/sha512\/[0-9a-f]{128}\.yaml$/);
      const podBytes = await store.read(entry!.pod);
      expect(entry!.pod).toContain(sha512Hex(podBytes));
      const pod = parseYaml(podBytes.toString()) as {
        metadata: { annotations: Record<string, string> };
        spec: { containers: Array<{ image: string; imagePullPolicy: string }> };
      };
      expect(pod.metadata.annotations['podmin.dev/service']).toBe('web');
      expect(pod.spec.containers[0]).toMatchObject({
        image: 'registry.podmin.internal/apps/hello:v1',
        imagePullPolicy: 'Always',
      });

      const again = await podmin(...deployArgs('web', 'default', '-f', 'daemonset.yaml'));
      expect(again.stderr).toContain('unchanged');

      const list = await podmin('list');
      expect(list.stdout.split('\n')[0]).toMatch(
        /^NAME\s+NAMESPACE\s+NODEGROUP\s+SERVICE\s+ORIGIN$/,
      );
      expect(list.stdout.split('\n')[1]).toMatch(/^web\s+default\s+default\s+web\s+-$/);
      const json = JSON.parse((await podmin('list', '-o', 'json')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(json).toEqual([
        expect.objectContaining({
          name: 'web',
          namespace: 'default',
          nodegroup: 'default',
          service: 'web',
          origin: null,
          vip: serviceVip('demo', 'default', 'web'),
        }),
      ]);
      expect(json[0]?.['vip']).toMatch(/^fd50:6f64:6d69:/);

      const removed = await podmin('delete', 'web', '-g', 'default');
      expect(removed.code).toBe(0);
      expect((await podmin('list', '-o', 'json')).stdout.trim()).toBe('[]');
      const missing = await podmin('delete', 'web', '-g', 'default');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('no such deployment');
    });

    it('commits a file with a Service under its own namespace and name', async () => {
      fs.writeFileSync(path.join(sandbox.cwd, 'product.yaml'), DAEMONSET_WITH_SERVICE);
      const deploy = await podmin(
        ...deployArgs(
          'web',
          'default',
          '-f',
          'product.yaml',
          '--service',
          '--image',
          'web=hello:v2',
        ),
      );
      expect(deploy.code).toBe(0);
      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { service?: string }
      >;
      expect(index['default/web']?.service).toMatch(/^services\/product\/frontend\/sha512\//);
      const row = JSON.parse((await podmin('list', '-o', 'json')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(row).toEqual([
        expect.objectContaining({ name: 'web', namespace: 'product', service: 'frontend' }),
      ]);
      // Another deployment may not take over product/frontend.
      fs.writeFileSync(
        path.join(sandbox.cwd, 'steal.yaml'),
        DAEMONSET_WITH_SERVICE.replace(/name: web$/m, 'name: thief'),
      );
      const before = await store.snapshot();
      const steal = await podmin(...deployArgs('thief', 'default', '-f', 'steal.yaml'));
      expect(steal.code).toBe(1);
      expect(steal.stderr).toContain('already owned by deployment default/web');
      expect(await store.snapshot()).toEqual(before);
      expect((await podmin('delete', 'web', '-g', 'default')).code).toBe(0);
    });

    const rejections: Array<[string, string[], RegExp]> = [
      ['no image for the built-in manifest', deployArgs('web', 'default'), /--image/],
      [
        'an external image',
        deployArgs('web', 'default', '--image', 'docker.io/library/nginx:1.27'),
        /podmin push/,
      ],
      [
        'a zero CPU limit',
        deployArgs('web', 'default', '--image', 'hello:v1', '--cpu', '0'),
        /--cpu/,
      ],
      [
        'a malformed memory limit',
        deployArgs('web', 'default', '--image', 'hello:v1', '--memory', 'lots'),
        /--memory/,
      ],
      [
        'bare and named images mixed',
        deployArgs('web', 'default', '--image', 'hello:v1', '--image', 'side=hello:v2'),
        /--image/,
      ],
      [
        'a bad port mapping',
        deployArgs('web', 'default', '--image', 'hello:v1', '--service', '--port', '80:0'),
        /--port/,
      ],
      [
        '--port with --file',
        deployArgs('web', 'default', '-f', 'product.yaml', '--port', '80:8080'),
        /--port/,
      ],
      [
        '--cpu with --file',
        deployArgs('web', 'default', '-f', 'product.yaml', '--cpu', '1'),
        /--cpu/,
      ],
      [
        'a NodeGroup mismatch',
        deployArgs('web', 'workers', '-f', 'product.yaml'),
        /nodegroup|nodeSelector/i,
      ],
      ['a name mismatch', deployArgs('other', 'default', '-f', 'product.yaml'), /metadata\.name/],
      [
        'an unknown container override',
        deployArgs('web', 'default', '-f', 'product.yaml', '--image', 'nope=hello:v2'),
        /nope/,
      ],
      ['a missing file', deployArgs('web', 'default', '-f', 'absent.yaml'), /absent\.yaml/],
      [
        '--service without a Service',
        deployArgs('web', 'default', '-f', 'no-service.yaml', '--service'),
        /--service/,
      ],
      ...Object.entries(BAD_MANIFESTS).map(
        ([file, { expect: pattern }]): [string, string[], RegExp] => [
          file,
          deployArgs('web', 'default', '-f', file),
          pattern,
        ],
      ),
    ];

    // A flag's value refused is a usage error (exit 2); a manifest or file refused is the
    // operation failing on its input (exit 1).
    const usage = new Set([
      'no image for the built-in manifest',
      'an external image',
      'a zero CPU limit',
      'a malformed memory limit',
      'bare and named images mixed',
      'a bad port mapping',
      '--port with --file',
      '--cpu with --file',
    ]);

    it.each(rejections)(
      'rejects %s with a clear error and leaves the bucket untouched',
      async (label, args, pattern) => {
        fs.writeFileSync(path.join(sandbox.cwd, 'product.yaml'), DAEMONSET_WITH_SERVICE);
        fs.writeFileSync(
          path.join(sandbox.cwd, 'no-service.yaml'),
          DAEMONSET_WITH_SERVICE.split('---')[0] as string,
        );
        for (const [file, { text }] of Object.entries(BAD_MANIFESTS))
          fs.writeFileSync(path.join(sandbox.cwd, file), text);
        const before = await store.snapshot();
        const result = await podmin(...args);
        expect({ label, code: result.code }).toEqual({ label, code: usage.has(label) ? 2 : 1 });
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/^Error: /m);
        expect(result.stderr).toMatch(pattern);
        expect(result.stderr).not.toMatch(/^\s+at /m);
        expect(await store.snapshot()).toEqual(before);
      },
    );

    const indexOf = async (): Promise<Record<string, IndexEntry>> =>
      JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        IndexEntry
      >;
    const historyKeys = async (prefix: string): Promise<string[]> =>
      Object.keys(await store.snapshot())
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
      const indexWithV1 = (await store.read('deployments/index.json')).toString();
      const v1 = (await indexOf())['hist/app'] as IndexEntry;
      expect(await historyKeys('history/hist/app/')).toEqual([]);
      expect((await podmin(...deployArgs('app', 'hist', '--image', 'hello:v2'))).code).toBe(0);
      const v2 = (await indexOf())['hist/app'] as IndexEntry;
      const [recordKey] = await historyKeys('history/hist/app/');
      expect(recordKey).toMatch(/^history\/hist\/app\/\d{8}T\d{9}Z-[0-9a-f]{16}\.json$/);
      expect(parseHistoryRecord(recordKey!, await store.read(recordKey!))).toMatchObject({
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
      expect((await store.read('deployments/index.json')).toString()).toBe(indexWithV1);
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
        const before = await store.snapshot();
        const result = await podmin(...args);
        expect({ label, code: result.code, stdout: result.stdout }).toEqual({
          label,
          code: 1,
          stdout: '',
        });
        expect(result.stderr).toMatch(/^Error: /m);
        expect(result.stderr).toMatch(pattern);
        expect(result.stderr).not.toMatch(/^\s+at /m);
        expect(await store.snapshot()).toEqual(before);
      }
      // A malformed history object: both commands name it and what is allowed; nothing changes.
      const bad = 'history/hist/bad/20260101T000000000Z-0000000000000000.json';
      await store.write(bad, '{"deployment": "hist/bad", "deployment": "hist/bad"}\n');
      const before = await store.snapshot();
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
        expect(await store.snapshot()).toEqual(before);
      }
      await store.write(bad, JSON.stringify({ deployment: 'hist/bad', by: 'me' }));
      const unknown = await podmin('rollback', 'bad', '-g', 'hist');
      expect(unknown.stderr).toMatch(
        /by: unknown field; allowed: deployment, action, time, replaced, replacement/,
      );
    });

    it('keeps all twenty history records when twenty deploys of one deployment run at once', async () => {
      expect((await podmin(...deployArgs('conc', 'hist', '--image', 'hello:c-first'))).code).toBe(
        0,
      );
      const first = (await indexOf())['hist/conc'] as IndexEntry;
      const tags = Array.from({ length: 20 }, (_, i) => `c${i}`);
      const results = await Promise.all(
        tags.map((t) => podmin(...deployArgs('conc', 'hist', '--image', `hello:${t}`))),
      );
      for (const r of results) expect(r).toMatchObject({ code: 0 });
      const keys = await historyKeys('history/hist/conc/');
      expect(keys).toHaveLength(20);
      const records = await Promise.all(
        keys.map(async (k) => parseHistoryRecord(k, await store.read(k))),
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
        seen.slice(1).map(async (p) => (await store.read(p)).toString()),
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

    it('keeps all twenty entries when twenty deploys run at once', async () => {
      const names = Array.from({ length: 20 }, (_, i) => `app-${i}`);
      const results = await Promise.all(
        names.map((n) => podmin(...deployArgs(n, 'race', '--image', `hello:${n}`))),
      );
      for (const r of results) expect(r).toMatchObject({ code: 0 });
      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { pod: string }
      >;
      for (const n of names) {
        const entry = index[`race/${n}`];
        expect(entry).toBeDefined();
        const bytes = await store.read(entry!.pod);
        expect(entry!.pod).toBe(`nodegroups/race/pods/sha512/${sha512Hex(bytes)}.yaml`);
        expect(bytes.toString()).toContain(`registry.podmin.internal/apps/hello:${n}`);
      }
    });
  });
}
