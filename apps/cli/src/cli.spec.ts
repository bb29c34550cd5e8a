import fs from 'node:fs';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { run } from './cli';
import { createCliContext } from './cli-context';
import { parseDuration } from './commands/deploy/deploy.command';
import { deployWebArgs } from './__fixtures__/deploy-args';
import { connectAndDeployWeb } from './__fixtures__/in-process';
import { useTempHome } from '@podmin/testing';

describe('run (in process)', () => {
  const temp = useTempHome('podmin-cli');
  const home = () => temp().home;
  const env = () => temp().env;
  let reporter: RecordingReporter;
  beforeEach(() => (reporter = new RecordingReporter()));

  it('connects, deploys and lists through the handlers', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    expect(fs.existsSync(path.join(home(), 'd', 'podmin', 'buckets', 'demo'))).toBe(true);
    expect(await run(deployWebArgs('hello:v1'), ctx)).toBe(0);
    expect(reporter.results).toEqual(['default/web']);
    expect(await run(['list', '-o', 'json'], ctx)).toBe(0);
    expect(JSON.parse(reporter.results[1] as string)).toEqual([
      expect.objectContaining({ name: 'web', nodegroup: 'default', service: null }),
    ]);
  });

  it('lists history and rolls back through the handlers', async () => {
    const ctx = createCliContext(reporter, env());
    await connectAndDeployWeb(ctx);
    expect(await run(deployWebArgs('hello:v2'), ctx)).toBe(0);
    reporter.results.length = 0;
    expect(await run(['history', 'web', '-g', 'default'], ctx)).toBe(0);
    const lines = (reporter.results[0] as string).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^REVISION\s+TIME\s+ACTION\s+IMAGES\s+CURRENT$/);
    expect(lines[1]).toMatch(
      /^[0-9a-f]{12}\s+\d{4}-\d\d-\d\dT\S+Z\s+deploy\s+registry\.podmin\.internal\/apps\/hello:v2\s+\*$/,
    );
    expect(lines[2]).toMatch(
      /^([0-9a-f]{12})\s+-\s+-\s+registry\.podmin\.internal\/apps\/hello:v1$/,
    );
    const older = /^([0-9a-f]{12})/.exec(lines[2] as string)?.[1];
    expect(await run(['rollback', 'web', '-g', 'default', '--no-pin'], ctx)).toBe(0);
    expect(reporter.results[1]).toBe(older);
    expect(reporter.infos.at(-1)).toMatch(
      new RegExp(`^Rolled back default/web from revision [0-9a-f]{12} to revision ${older}`),
    );
    expect(await run(['rollback', 'web', '-g', 'default', '--to', 'zz'], ctx)).toBe(1);
    expect(reporter.infos.at(-1)).toContain('--to "zz" is not a revision');
  });

  it('shows status from receipts and checks the --wait flags', async () => {
    const ctx = createCliContext(reporter, env());
    await connectAndDeployWeb(ctx);
    expect(await run(['status'], ctx)).toBe(0);
    expect(reporter.results[1]).toMatch(/^NAME\s+NODEGROUP\s+NODE\s+DESIRED\s+APPLIED/);
    expect(reporter.results[1]).toContain('no node receipts');
    expect(reporter.results[1]).toContain('web: 0/0 ready (no live node)');
    expect(await run(['status', 'nope', '-g', 'default'], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain('no such deployment');
    expect(await run(deployWebArgs('hello:v1', '--rollback-on-failure'), ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('--rollback-on-failure needs --wait');
    expect(await run(deployWebArgs('hello:v1', '--wait', '--timeout', 'soon'), ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('is not a duration');
  });

  it('prints one document per -o json|yaml|name run and gives the reporter back afterwards', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    reporter.results.length = 0;
    expect(await run(deployWebArgs('hello:v1', '-o', 'json'), ctx)).toBe(0);
    expect(await run(deployWebArgs('hello:v2', '-o', 'yaml'), ctx)).toBe(0);
    expect(await run(deployWebArgs('hello:v3', '-o', 'name'), ctx)).toBe(0);
    expect(reporter.results).toEqual([
      '{\n  "key": "default/web",\n  "changed": true\n}\n',
      'key: default/web\nchanged: true\n',
      'deployment/default/web\n',
    ]);
    // The table run after them reports through the recording reporter itself, as before.
    expect(ctx.reporter).toBe(reporter);
    expect(await run(deployWebArgs('hello:v4'), ctx)).toBe(0);
    expect(reporter.results.at(-1)).toBe('default/web');
    expect(await run(['history', 'web', '-g', 'default', '--limit', '-3'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('--limit: "-3" is not a whole number');
  });

  it('parses --timeout durations', () => {
    expect([
      parseDuration('90s'),
      parseDuration('5m'),
      parseDuration('1h'),
      parseDuration('30'),
    ]).toEqual([90_000, 300_000, 3_600_000, 30_000]);
    expect(parseDuration('0s')).toBeUndefined();
    expect(parseDuration('5 minutes')).toBeUndefined();
  });

  it('warns when a Service selects no Pod of its DaemonSet, and refuses spec.type', async () => {
    const ctx = createCliContext(reporter, env());
    const file = path.join(home(), 'app.yaml');
    expect(
      await run(
        ['init', 'web', '-g', 'default', '--image', 'hello:v1', '--service', '-f', file],
        ctx,
      ),
    ).toBe(0);
    const manifest = fs.readFileSync(file, 'utf8');
    const blueGreen = manifest.replace(
      /(kind: Service[\s\S]*selector:\n\s+)app\.kubernetes\.io\/name: web/,
      '$1track: blue',
    );
    expect(blueGreen).not.toBe(manifest);
    fs.writeFileSync(file, blueGreen);
    expect(await run(['validate', '-f', file], ctx)).toBe(0);
    expect(reporter.warnings.join('\n')).toContain('selects no Pod of this DaemonSet');
    fs.writeFileSync(
      file,
      manifest.replace(/(kind: Service\n[\s\S]*spec:\n)/, '$1  type: ClusterIP\n'),
    );
    expect(await run(['validate', '-f', file], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain('spec.type: is not supported');
  });

  it('refuses setup --agent-source on the local provider, whose node runs the agent beside the CLI', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    expect(await run(['setup', '--agent-source', home()], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain('--agent-source is for AWS clusters');
  });

  it('prints message and hint, not a stack, for a missing context', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['list'], ctx)).toBe(1);
    const text = reporter.infos.join('\n');
    expect(text).toContain('Error: this command needs a current cluster context');
    expect(text).toContain('Hint: run `podmin connect');
    expect(text).not.toMatch(/^\s+at /m);
  });

  it('adds the stack with --debug', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['list', '--debug'], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toMatch(/^\s+at /m);
  });

  it('shows usage for an invocation error and exits 2', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['deploy', 'web'], ctx)).toBe(2);
    const text = reporter.infos.join('\n');
    expect(text).toContain('Missing required argument: nodegroup');
    expect(text).toContain('--image');
  });

  it('names an unknown command and the closest one, without the usage, and exits 2', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['stauts'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toBe(
      'Error: Unknown command "stauts"; did you mean "status"?\nHint: run `podmin --help` for the list of commands',
    );
    reporter.infos.length = 0;
    expect(await run(['zebra'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('Error: Unknown command "zebra"\n');
    expect(reporter.infos.join('\n')).not.toContain('did you mean');
  });

  it('exits 2 for an unknown flag, a bad value or a flag without its value', async () => {
    const ctx = createCliContext(reporter, env());
    for (const [args, message] of [
      [['list', '--bogus'], 'Unknown argument: bogus'],
      [['connect', 'demo', '--provider', 'gcp'], 'Invalid values'],
      [['list', '--context'], 'Not enough arguments following: context'],
      [['list', '--context='], '--context needs a context name'],
    ] as const) {
      reporter.infos.length = 0;
      expect({ args, code: await run([...args], ctx) }).toEqual({ args, code: 2 });
      expect(reporter.infos.join('\n')).toContain(message);
    }
  });

  it('uses --context over PODMIN_CONTEXT over the saved context, never saving the choice', async () => {
    const ctx = createCliContext(reporter, env());
    for (const cluster of ['one', 'two', 'three']) {
      const bucket = path.join(home(), `bucket-${cluster}`);
      expect(await run(['connect', cluster, '--provider', 'local', '--bucket', bucket], ctx)).toBe(
        0,
      );
    }
    expect(await run(['use', 'one'], ctx)).toBe(0);
    const config = path.join(home(), 'c', 'podmin', 'config.json');
    const saved = fs.readFileSync(config);
    const deploy = deployWebArgs('hello:v1');
    const withVariable = createCliContext(reporter, { ...env(), PODMIN_CONTEXT: 'two' });
    expect(await run(deploy, withVariable)).toBe(0);
    expect(await run([...deploy, '--context', 'three'], withVariable)).toBe(0);
    const committed = (cluster: string): boolean =>
      fs.existsSync(path.join(home(), `bucket-${cluster}`, 'deployments', 'index.json'));
    expect(['one', 'two', 'three'].map(committed)).toEqual([false, true, true]);
    // Each run chooses afresh: the variable's context, then the flag's, which has nothing.
    expect(await run(['list'], withVariable)).toBe(0);
    expect(reporter.results.at(-1)).toMatch(/^web\s+default\s+default/m);
    expect(await run(['list', '--context', 'one'], withVariable)).toBe(0);
    expect(reporter.results.at(-1)).not.toContain('web');
    expect(fs.readFileSync(config).equals(saved)).toBe(true);
    reporter.infos.length = 0;
    expect(await run(['list', '--context', 'nope'], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain(
      'using context "nope" (from --context): no such context; known contexts: one, three, two',
    );
    // Commands that need no context accept and ignore it.
    expect(await run(['use', '--context', 'nope'], ctx)).toBe(0);
    expect(fs.readFileSync(config).equals(saved)).toBe(true);
  });
});
