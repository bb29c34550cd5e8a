import fs from 'node:fs';
import path from 'node:path';
import { deployWebArgs, makeSandbox, type CliSandbox } from './cli-harness';

// `--context NAME` and PODMIN_CONTEXT pick a saved context for one invocation: two pipelines
// on one runner no longer race on the saved current context.
describe('podmin --context and PODMIN_CONTEXT', () => {
  let sandbox: CliSandbox;
  let config: string;
  const bucket = (name: string): string => path.join(sandbox.home, `bucket-${name}`);
  const index = (name: string): string => path.join(bucket(name), 'deployments', 'index.json');
  const deployed = (name: string): Record<string, { pod: string }> =>
    JSON.parse(fs.readFileSync(index(name), 'utf8')) as Record<string, { pod: string }>;
  const deploy = deployWebArgs;

  beforeAll(async () => {
    sandbox = makeSandbox();
    for (const name of ['a', 'b', 'saved']) {
      const connected = await sandbox.run([
        'connect',
        name,
        '--provider',
        'local',
        '--bucket',
        bucket(name),
      ]);
      expect(connected.code).toBe(0);
    }
    config = path.join(sandbox.configHome, 'podmin', 'config.json');
  });
  afterAll(() => sandbox.cleanup());

  it('documents --context and PODMIN_CONTEXT in --help', async () => {
    const help = (await sandbox.run(['--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--context Use this saved context for this invocation only');
    expect(help).toContain('PODMIN_CONTEXT');
    const list = (await sandbox.run(['list', '--help'])).stdout;
    expect(list).toContain('--context');
  });

  it('runs two deploys at once, --context a and --context b, each into its own bucket', async () => {
    const saved = fs.readFileSync(config);
    const [a, b] = await Promise.all([
      sandbox.run([...deploy('hello:a'), '--context', 'a']),
      sandbox.run(['--context', 'b', ...deploy('hello:b')]),
    ]);
    expect([a.code, a.stderr]).toEqual([0, expect.stringContaining('Committed: default/web')]);
    expect([b.code, b.stderr]).toEqual([0, expect.stringContaining('Committed: default/web')]);
    const podOf = (name: string): string =>
      fs.readFileSync(path.join(bucket(name), deployed(name)['default/web']!.pod), 'utf8');
    expect(podOf('a')).toContain('registry.podmin.internal/apps/hello:a');
    expect(podOf('b')).toContain('registry.podmin.internal/apps/hello:b');
    expect(fs.existsSync(index('saved'))).toBe(false);
    // The saved current context is the one connected last, byte for byte unchanged.
    expect(fs.readFileSync(config).equals(saved)).toBe(true);
    expect((await sandbox.run(['use'])).stdout).toMatch(/^\*\s+saved\s+local/m);
  });

  it('takes PODMIN_CONTEXT for one run, and --context over it', async () => {
    const saved = fs.readFileSync(config);
    const fromVariable = await sandbox.run(['list', '-o', 'json'], { PODMIN_CONTEXT: 'a' });
    expect(fromVariable.code).toBe(0);
    expect(JSON.parse(fromVariable.stdout)).toEqual([expect.objectContaining({ name: 'web' })]);
    const flagWins = await sandbox.run(['list', '-o', 'json', '--context', 'saved'], {
      PODMIN_CONTEXT: 'a',
    });
    expect(flagWins.code).toBe(0);
    expect(JSON.parse(flagWins.stdout)).toEqual([]);
    const current = await sandbox.run(['list', '-o', 'json']);
    expect(JSON.parse(current.stdout)).toEqual([]);
    expect(fs.readFileSync(config).equals(saved)).toBe(true);
  });

  it('refuses an unknown context, naming it and the known ones', async () => {
    const saved = fs.readFileSync(config);
    const flag = await sandbox.run(['status', '--context', 'nope']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain(
      'Error: using context "nope" (from --context): no such context; known contexts: a, b, saved',
    );
    const variable = await sandbox.run(['list'], { PODMIN_CONTEXT: 'nope' });
    expect(variable.code).toBe(1);
    expect(variable.stderr).toContain('"nope" (from PODMIN_CONTEXT): no such context');
    expect(fs.readFileSync(config).equals(saved)).toBe(true);
  });

  it('lets commands that need no context accept and ignore it', async () => {
    const init = await sandbox.run(
      ['init', 'web', '-g', 'default', '--image', 'hello:v1', '--context', 'nope'],
      { PODMIN_CONTEXT: 'nope' },
    );
    expect(init.code).toBe(0);
    const validate = await sandbox.run(['validate', '-f', 'daemonset.yaml', '--context', 'nope']);
    expect(validate.code).toBe(0);
    const use = await sandbox.run(['use', '--context', 'nope']);
    expect(use.code).toBe(0);
    expect(use.stdout).toMatch(/^\*\s+saved\s+local/m);
  });

  it('completes context names after --context', async () => {
    const complete = (...words: string[]) =>
      sandbox.run(['--get-yargs-completions', 'podmin', ...words]);
    const all = await complete('deploy', '--context', '');
    expect([all.code, all.stdout, all.stderr]).toEqual([0, 'a\nb\nsaved\n', '']);
    const prefix = await complete('list', '--context', 's');
    expect(prefix.stdout).toBe('saved\n');
    const inline = await complete('--context=');
    expect(inline.stdout).toBe('--context=a\n--context=b\n--context=saved\n');
    // Elsewhere the usual completions: commands, and flags including --context.
    expect((await complete('')).stdout.split('\n')).toEqual(
      expect.arrayContaining(['deploy', 'status', 'use']),
    );
    expect((await complete('list', '--')).stdout.split('\n')).toContain('--context');
  });
});
