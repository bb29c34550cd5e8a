import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FakeUpstream } from '@podmin/testing';
import { podRevision, receiptKey } from '@podmin/util-receipts';
import {
  agentReceipt as receipt,
  deployWebArgs,
  makeSandbox,
  type CliRun,
  type CliSandbox,
} from './cli-harness';

const FIXTURE = path.resolve(
  __dirname,
  '../../../../libs/cli/feature-image/src/__fixtures__/hello-app',
);
const PAUSE = 'registry.k8s.io/pause:3.10';

/**
 * The shape of a JSON value: every field name with its type ('string', 'number', 'boolean',
 * 'null'), an array as the shape of its first item (`[]` when empty). Pinning shapes, not
 * values, is what keeps scripts working: a renamed field or a changed type fails here.
 */
type Shape = string | Shape[] | { [field: string]: Shape };
function shapeOf(value: unknown): Shape {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, shapeOf(v)]),
    );
  return typeof value;
}

/** stdout of a run that must succeed, parsed as the format asked for: nothing else may be there. */
function documentOf(run: CliRun, format: 'json' | 'yaml'): unknown {
  expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
    code: 0,
    stderr: '',
  });
  return format === 'json'
    ? (JSON.parse(run.stdout) as unknown)
    : (parseYaml(run.stdout) as unknown);
}

// The output conventions (README "Output and exit codes"): every data command prints one
// document with -o json and -o yaml, nothing else on stdout; each command's shape is pinned.
describe('podmin -o json|yaml|name (bundled CLI, local bucket)', () => {
  let sandbox: CliSandbox;
  let upstream: FakeUpstream;
  let bucket: string;
  /**
   * Runs a command with -o json, then (after `between`) `yamlArgs` with -o yaml; both must
   * parse and have `shape`.
   */
  const both = async (
    args: string[],
    shape: Shape,
    yamlArgs: string[] = args,
    between: () => Promise<unknown> = () => Promise.resolve(),
  ): Promise<{ json: unknown; yaml: unknown }> => {
    const json = documentOf(await sandbox.run([...args, '-o', 'json']), 'json');
    expect(shapeOf(json)).toEqual(shape);
    await between();
    const yaml = documentOf(await sandbox.run([...yamlArgs, '-o', 'yaml']), 'yaml');
    expect(shapeOf(yaml)).toEqual(shape);
    return { json, yaml };
  };

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    upstream.setRegistryTags('pause', ['3.9', '3.10']);
    sandbox = makeSandbox({ PODMIN_TEST_DEPENDENCY_BASE_URL: upstream.base });
    bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
    expect((await sandbox.run(['connect', 'other', '--provider', 'local'])).code).toBe(0);
    expect((await sandbox.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
  });
  afterAll(async () => {
    sandbox.cleanup();
    await upstream.stop();
  });

  it.each([
    ['list'],
    ['status'],
    ['history'],
    ['secret', 'list'],
    ['use'],
    ['deploy'],
    ['rollback'],
    ['delete'],
    ['push'],
    ['build'],
    ['pull'],
    ['fetch'],
    ['setup'],
    ['version'],
  ])('explains -o with examples in `%s --help`', async (...command) => {
    const help = await sandbox.run([...command, '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('-o, --output Output format: table (default, for people), json or yaml');
    expect(text).toContain('[choices: "table", "json", "yaml", "name"');
    expect(text).toMatch(new RegExp(`podmin ${command.join(' ')} .*-o (json|yaml|name)`));
  });

  it('version', async () => {
    const { json, yaml } = await both(['version'], {
      version: 'string',
      node: 'string',
      platform: 'string',
      arch: 'string',
    });
    expect(yaml).toEqual(json);
    const plain = await sandbox.run(['version']);
    expect(plain.stdout).toBe((await sandbox.run(['--version'])).stdout);
    expect((await sandbox.run(['version', '-o', 'name'])).stdout).toBe(
      `version/${(json as { version: string }).version}\n`,
    );
  });

  it('use (list and select)', async () => {
    const row = {
      cluster: 'string',
      provider: 'string',
      region: 'string',
      bucket: 'string',
      profile: 'null',
      secretsProvider: 'string',
      current: 'boolean',
    };
    const { json, yaml } = await both(['use'], [row]);
    expect(yaml).toEqual(json);
    expect(json).toEqual([
      expect.objectContaining({ cluster: 'demo', current: true, bucket }),
      expect.objectContaining({ cluster: 'other', current: false }),
    ]);
    expect((await sandbox.run(['use', '-o', 'name'])).stdout).toBe('context/demo\ncontext/other\n');
    await both(['use', 'other'], row, ['use', 'demo']);
    expect((await sandbox.run(['use', 'demo', '-o', 'name'])).stdout).toBe('context/demo\n');
    expect((await sandbox.run(['use'])).stdout).toMatch(/^\*\s+demo\s+local/m);
  });

  it('build, and push without progress', async () => {
    await both(['build', FIXTURE, '-t', 'hello:v1'], { references: ['string'], digest: 'string' });
    const name = await sandbox.run([
      'build',
      FIXTURE,
      '-t',
      'hello:v1',
      '-t',
      'hello:v2',
      '-o',
      'name',
    ]);
    expect(name.stdout).toBe(
      'image/registry.podmin.internal/apps/hello:v1\nimage/registry.podmin.internal/apps/hello:v2\n',
    );
    const push = await sandbox.run(['push', 'hello:v1', '-o', 'json']);
    expect(JSON.parse(push.stdout)).toEqual({
      reference: 'registry.podmin.internal/apps/hello:v1',
    });
    // No progress with json (the table run prints plain "Pushing …: 0 B of …" lines).
    expect(push.stderr).not.toMatch(/Pushing .* of /);
    await both(['push', 'hello:v1'], { reference: 'string' });
  });

  it('deploy (and its deprecated -o text), list, history, rollback, delete', async () => {
    const deploy = deployWebArgs;
    const { json } = await both(
      deploy('hello:v1'),
      { key: 'string', changed: 'boolean' },
      deploy('hello:v2'),
    );
    expect(json).toEqual({ key: 'default/web', changed: true });
    const text = await sandbox.run([...deploy('hello:v3'), '-o', 'text']);
    expect([text.code, text.stdout]).toEqual([0, 'default/web\n']);
    expect((await sandbox.run([...deploy('hello:v4'), '-o', 'name'])).stdout).toBe(
      'deployment/default/web\n',
    );

    const listed = await both(
      ['list'],
      [
        {
          name: 'string',
          namespace: 'string',
          nodegroup: 'string',
          service: 'null',
          origin: 'null',
          pod: 'string',
          servicePath: 'null',
          vip: 'null',
        },
      ],
    );
    expect(listed.yaml).toEqual(listed.json);
    expect((await sandbox.run(['list', '-o', 'name'])).stdout).toBe('deployment/default/web\n');

    const history = await both(
      ['history', 'web', '-g', 'default'],
      [
        {
          revision: 'string',
          time: 'string',
          action: 'string',
          current: 'boolean',
          images: ['string'],
          pod: 'string',
          service: 'null',
        },
      ],
    );
    expect(history.yaml).toEqual(history.json);
    expect(history.json).toHaveLength(4);
    const limited = await sandbox.run([
      'history',
      'web',
      '-g',
      'default',
      '--limit',
      '1',
      '-o',
      'json',
    ]);
    expect(JSON.parse(limited.stdout)).toEqual([(history.json as unknown[])[0]]);
    expect(limited.stderr).toContain(
      '3 older revisions not shown (--limit 1; --limit 0 shows all)',
    );
    const revisions = await sandbox.run([
      'history',
      'web',
      '-g',
      'default',
      '-o',
      'name',
      '--limit',
      '0',
    ]);
    expect(revisions.stdout).toMatch(/^(revision\/[0-9a-f]{12}\n){4}$/);

    const rolled = await both(['rollback', 'web', '-g', 'default', '--no-pin'], {
      key: 'string',
      changed: 'boolean',
      revision: 'string',
      from: 'string',
    });
    expect(rolled.json).toMatchObject({ key: 'default/web', changed: true });

    const remove = ['delete', 'web', '-g', 'default'];
    const deleted = await both(remove, { key: 'string', deleted: 'string' }, remove, () =>
      sandbox.run(deploy('hello:v5')),
    );
    expect(deleted.json).toMatchObject({ key: 'default/web' });
    expect(deleted.yaml).toMatchObject({ key: 'default/web' });
  });

  it('status, with a node receipt, and its name form', async () => {
    await sandbox.run(deployWebArgs('hello:v1'));
    const [entry] = JSON.parse((await sandbox.run(['list', '-o', 'json'])).stdout) as Array<{
      pod: string;
    }>;
    const revision = podRevision(entry!.pod);
    fs.mkdirSync(path.join(bucket, 'status', 'default'), { recursive: true });
    fs.writeFileSync(
      path.join(bucket, receiptKey('default', 'node-1')),
      receipt('node-1', [{ deployment: 'default/web', revision }]),
    );
    const { json } = await both(
      ['status'],
      [
        {
          key: 'string',
          name: 'string',
          nodegroup: 'string',
          desired: 'string',
          nodes: [
            {
              node: 'string',
              state: 'string',
              applied: 'string',
              ready: 'null',
              restarts: 'null',
              reason: 'null',
              kubelet: 'string',
              ageMs: 'number',
            },
          ],
          live: 'number',
          ready: 'number',
          rollout: {
            target: 'string',
            updated: 'number',
            available: 'number',
            total: 'number',
            paused: 'boolean',
            halted: 'null',
          },
          dropped: 'number',
          summary: 'string',
        },
      ],
    );
    expect(json).toEqual([expect.objectContaining({ desired: revision, live: 1, dropped: 0 })]);
    expect((await sandbox.run(['status', '-o', 'name'])).stdout).toBe('deployment/default/web\n');
  });

  it('secret list', async () => {
    const file = path.join(sandbox.cwd, 'db-url');
    fs.writeFileSync(file, 'postgres://db');
    expect(
      (await sandbox.run(['secret', 'create', 'db-url', '--for', 'web', '--from-file', file])).code,
    ).toBe(0);
    const { json, yaml } = await both(
      ['secret', 'list'],
      [{ namespace: 'string', pod: 'string', key: 'string', provider: 'string' }],
    );
    expect(yaml).toEqual(json);
    expect((await sandbox.run(['secret', 'list', '-o', 'name'])).stdout).toBe(
      'secret/default/web/db-url\n',
    );
  });

  it('fetch, from a loopback upstream, with the pause image built locally', async () => {
    const dir = path.join(sandbox.home, 'pause');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'pause'), '#!/bin/sh\n');
    fs.writeFileSync(path.join(dir, 'Containerfile'), 'FROM scratch\nCOPY pause /pause\n');
    expect((await sandbox.run(['build', dir, '-t', PAUSE, '--platform', 'linux/arm64'])).code).toBe(
      0,
    );
    const { json, yaml } = await both(['fetch', '--arch', 'arm64'], {
      files: [
        {
          name: 'string',
          arch: 'string',
          version: 'string',
          path: 'string',
          digest: 'string',
          size: 'number',
        },
      ],
      images: [{ name: 'string', version: 'string', source: 'string', digest: 'string' }],
    });
    expect(yaml).toEqual(json);
    const fetched = json as { files: Array<{ name: string; path: string }>; images: unknown[] };
    expect(fetched.files.map((f) => f.name)).toContain('podmin-agent');
    expect(fetched.files.every((f) => fs.existsSync(f.path))).toBe(true);
    expect(fetched.images).toEqual([expect.objectContaining({ name: 'pause', source: PAUSE })]);
    const names = await sandbox.run(['fetch', '--arch', 'arm64', '-o', 'name']);
    expect(names.stdout).toMatch(/^file\/containerd\/arm64$/m);
    expect(names.stdout).toMatch(/^image\/registry\.k8s\.io\/pause:3\.10@sha256:[0-9a-f]{64}$/m);
  });
});
