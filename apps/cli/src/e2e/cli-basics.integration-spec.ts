import fs from 'node:fs';
import path from 'node:path';
import { makeSandbox, type CliSandbox } from './cli-harness';

const COMMANDS = [
  'connect',
  'use',
  'disconnect',
  'init',
  'validate',
  'deploy',
  'list',
  'delete',
  'install',
];

describe('podmin basics', () => {
  let sandbox: CliSandbox;
  beforeAll(() => {
    sandbox = makeSandbox();
  });
  afterAll(() => sandbox.cleanup());

  it('prints its version and a help that lists every command', async () => {
    const version = await sandbox.run(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await sandbox.run(['--help']);
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.stdout).toContain(`podmin ${c}`);
  });

  it.each(COMMANDS)('shows examples in `%s --help`', async (command) => {
    const help = await sandbox.run([command, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
  });

  it('prints a completion script', async () => {
    const completion = await sandbox.run(['completion']);
    expect(completion.stdout).toContain('podmin');
    expect(completion.stdout).toMatch(/complete|compdef/);
  });

  it('asks for a context only where the cluster is touched', async () => {
    for (const args of [
      ['list'],
      ['delete', 'web', '-g', 'default'],
      ['deploy', 'web', '-g', 'default', '--image', 'hello:v1'],
      ['install', 'cloudflared', '-g', 'default'],
    ]) {
      const result = await sandbox.run(args);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('needs a current cluster context');
      expect(result.stderr).toContain('Hint: run `podmin connect');
    }
    const init = await sandbox.run(['init', 'web', '-g', 'default', '--image', 'hello:v1']);
    expect(init.code).toBe(0);
    const validate = await sandbox.run(['validate', '-f', 'daemonset.yaml']);
    expect(validate.code).toBe(0);
  });

  it('refuses to overwrite a manifest and requires validate to name its file', async () => {
    const file = path.join(sandbox.cwd, 'keep.yaml');
    fs.writeFileSync(file, 'mine\n');
    const init = await sandbox.run([
      'init',
      'web',
      '-g',
      'default',
      '--image',
      'hello:v1',
      '-f',
      'keep.yaml',
    ]);
    expect(init.code).toBe(1);
    expect(init.stderr).toContain('already exists');
    expect(fs.readFileSync(file, 'utf8')).toBe('mine\n');
    const validate = await sandbox.run(['validate']);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('Missing required argument: file');
  });

  it('reports usage errors with the usage and without a stack', async () => {
    const result = await sandbox.run(['connect', 'demo', '--provider', 'gcp']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid values');
    expect(result.stderr).toContain('--provider');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('saves contexts with mode 0600, lists, selects and forgets them', async () => {
    expect((await sandbox.run(['connect', 'one', '--provider', 'local'])).code).toBe(0);
    expect(
      (
        await sandbox.run([
          'connect',
          'two',
          '--provider',
          'local',
          '--bucket',
          path.join(sandbox.home, 'b2'),
        ])
      ).code,
    ).toBe(0);
    const config = path.join(sandbox.home, 'xdg-config', 'podmin', 'config.json');
    expect(fs.statSync(config).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(sandbox.home, 'b2')).isDirectory()).toBe(true);
    let table = (await sandbox.run(['use'])).stdout;
    expect(table).toMatch(/^\*\s+two\s+local/m);
    expect((await sandbox.run(['use', 'one'])).code).toBe(0);
    table = (await sandbox.run(['use'])).stdout;
    expect(table).toMatch(/^\*\s+one\s+local/m);
    const unknown = await sandbox.run(['use', 'three']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no such context');
    expect((await sandbox.run(['disconnect', 'two'])).code).toBe(0);
    expect(fs.statSync(path.join(sandbox.home, 'b2')).isDirectory()).toBe(true);
    expect((await sandbox.run(['use'])).stdout).not.toContain('two');
    const bad = await sandbox.run(['connect', 'Bad_Name', '--provider', 'local']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('<cluster>');
  });
});
