import fs from 'node:fs';
import path from 'node:path';
import {
  connectedLocalSandbox,
  deployArgs,
  deployWebArgs,
  expectExit,
  makeSandbox,
  type CliSandbox,
} from './cli-harness';

// One test per exit code (0 success, 1 the operation failed, 2 usage error), run through the
// built CLI as a script would see it.
describe('podmin exit codes', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  beforeAll(async () => {
    ({ sandbox, bucket } = await connectedLocalSandbox());
  });
  afterAll(() => sandbox.cleanup());

  it('documents the exit codes in --help', async () => {
    const help = await sandbox.run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'Exit codes: 0 success; 1 the operation failed; 2 usage error (unknown command or flag, bad value, missing argument).',
    );
  });

  it('exits 0 when the command succeeds', async () => {
    const deploy = await sandbox.run(deployWebArgs('hello:v1'));
    expect(deploy.stderr).not.toMatch(/^Error:/m);
    expect(deploy.code).toBe(0);
    const status = await sandbox.run(['status', 'web', '-g', 'default']);
    expect(status.code).toBe(0);
  });

  it('exits 1 when the operation fails: status of an unknown deployment', async () => {
    const status = await sandbox.run(['status', 'nope', '-g', 'default']);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(
      'Error: reading the status of default/nope: no such deployment in the desired-state index',
    );
    // A failed operation does not print the usage.
    expect(status.stderr).not.toContain('Options:');
  });

  it('exits 1 when the operation fails: deploy to a bucket that is gone', async () => {
    const other = makeSandbox();
    try {
      const gone = path.join(other.home, 'gone');
      expect(
        (await other.run(['connect', 'gone', '--provider', 'local', '--bucket', gone])).code,
      ).toBe(0);
      fs.rmSync(gone, { recursive: true });
      const deploy = await other.run(deployWebArgs('hello:v1'));
      expect(deploy.code).toBe(1);
      expect(deploy.stderr).toContain(`the bucket directory ${gone} does not exist`);
      expect(fs.existsSync(gone)).toBe(false);
    } finally {
      other.cleanup();
    }
  });

  it('exits 2 for an unknown command, naming it and the closest command', async () => {
    const typo = await sandbox.run(['stauts']);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toBe(
      'Error: Unknown command "stauts"; did you mean "status"?\nHint: run `podmin --help` for the list of commands\n',
    );
    // A word that is no near miss gets no suggestion, and never the help with exit 0.
    const unrelated = await sandbox.run(['zebra']);
    expect(unrelated.code).toBe(2);
    expect(unrelated.stderr).toContain('Error: Unknown command "zebra"\n');
    expect(unrelated.stderr).not.toContain('did you mean');
  });

  it('exits 2 for an unknown flag', async () => {
    const result = await sandbox.run(['list', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Error: Unknown argument: bogus');
    expect(result.stderr).toContain('podmin list');
  });

  it('exits 2 for a bad value', async () => {
    const before = fs.readdirSync(bucket).sort();
    const refused: Array<[string[], ...string[]]> = [
      [['list', '-o', 'xml'], 'Invalid values'],
      [
        deployWebArgs('hello:v2', '--wait', '--timeout', 'soon'),
        '--timeout: "soon" is not a duration',
      ],
      // Values a feature library checks (a quantity, a name) are usage errors too.
      [
        deployWebArgs('hello:v2', '--cpu', 'lots'),
        '--cpu: "lots" is not a positive Kubernetes quantity',
      ],
      [deployArgs('Web_1', 'default', '--image', 'x'), '<name>: "Web_1" is invalid'],
      [['connect', 'Bad_Name', '--provider', 'local', '--bucket', bucket]],
    ];
    for (const [args, ...fragments] of refused) await expectExit(sandbox, args, 2, ...fragments);
    expect(fs.readdirSync(bucket).sort()).toEqual(before);
  });

  it('exits 2 for an unknown subcommand, naming it and the closest one', async () => {
    const typos: Array<[string[], string]> = [
      [
        ['secret', 'craete', 'db-url'],
        'Unknown command "secret craete"; did you mean "secret create"?',
      ],
      [['secret', 'craete'], 'Unknown command "secret craete"; did you mean "secret create"?'],
      [
        ['rollout', 'restrat', 'web', '-g', 'default'],
        'Unknown command "rollout restrat"; did you mean "rollout restart"?',
      ],
    ];
    for (const [args, message] of typos) await expectExit(sandbox, args, 2, message);
  });

  it('exits 2 for a missing argument', async () => {
    const missing: Array<[string[], string]> = [
      [['deploy', 'web', '--image', 'hello:v1'], 'Error: Missing required argument: nodegroup'],
      [['list', '--context'], 'Not enough arguments following: context'],
    ];
    for (const [args, message] of missing) await expectExit(sandbox, args, 2, message);
  });
});
