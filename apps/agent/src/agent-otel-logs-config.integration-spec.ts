// `podmin-agent otel-logs-config` as Fluent Bit's ExecStartPre runs it: the built agent bundle
// as a real process, reading the exporter headers secret from the SSM / Secrets Manager
// emulator and the log-export leaf from a telemetry directory laid out as agent-identity
// writes it (an `otel-logs` link to a generation holding client.crt and client.key).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import {
  createSecretsManagerClient,
  createSsmClient,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
} from '@podmin/data-access-secrets';
import { AGENT_BIN, emulatorAgentEnv, getAwsEmulator, type AwsEmulator } from '@podmin/testing';

interface Output {
  name: string;
  header?: string[];
  'tls.crt_file'?: string;
  'tls.key_file'?: string;
  'tls.ca_file'?: string;
  'tls.verify'?: string;
  'tls.verify_hostname'?: string;
}

describe('podmin-agent otel-logs-config (built bundle, AWS emulator)', () => {
  let emulator: AwsEmulator;
  let work: string;
  let telemetry: string;
  let out: string;
  // A cluster of its own per test: the emulator's secrets outlive a test.
  let cluster: string;
  let secretName: string;
  let tests = 0;

  beforeAll(async () => {
    emulator = await getAwsEmulator();
  });

  beforeEach(() => {
    tests += 1;
    cluster = `logs${Date.now().toString(36)}t${tests}`;
    secretName = `/${cluster}/_system/otel-logs-headers`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-otel-config-'));
    telemetry = path.join(work, 'run/podmin/telemetry');
    out = path.join(work, 'run/fluent-bit/podmin.yaml');
    fs.mkdirSync(telemetry, { recursive: true, mode: 0o700 });
    generation('gen-1');
    fs.writeFileSync(path.join(telemetry, 'otel-logs-ca.pem'), 'ca bundle\n', { mode: 0o600 });
  });

  afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

  /** A leaf generation as agent-identity writes it, selected by swapping the relative link. */
  function generation(id: string): string {
    const dir = path.join(telemetry, 'otel-logs-generations', id);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'client.crt'), `cert ${id}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'client.key'), `key ${id}\n`, { mode: 0o600 });
    fs.chmodSync(dir, 0o500);
    const temp = path.join(telemetry, `.otel-logs-${id}`);
    fs.symlinkSync(`otel-logs-generations/${id}`, temp);
    fs.renameSync(temp, path.join(telemetry, 'otel-logs'));
    return dir;
  }

  /** Runs the subcommand with the unit's flags plus `extra`, in the emulator's environment. */
  function run(extra: string[] = []) {
    const result = spawnSync(
      process.execPath,
      [
        AGENT_BIN,
        'otel-logs-config',
        '--provider',
        'aws',
        '--region',
        emulator.region,
        '--cluster',
        cluster,
        '--nodegroup',
        'workers',
        '--endpoint',
        'https://otlp.example.com:4318/v1/logs',
        '--out',
        out,
        '--telemetry-dir',
        telemetry,
        '--state-dir',
        path.join(work, 'var/lib/fluent-bit'),
        ...extra,
      ],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...emulatorAgentEnv(emulator) },
      },
    );
    return { code: result.status, stderr: result.stderr, stdout: result.stdout };
  }

  const output = (): Output =>
    (parse(fs.readFileSync(out, 'utf8')) as { pipeline: { outputs: Output[] } }).pipeline
      .outputs[0] as Output;

  const ssm = () =>
    new ParameterStoreSecretStore(
      createSsmClient({
        region: emulator.region,
        endpoint: emulator.endpoint,
        credentials: emulator.credentials,
      }),
    );

  it('writes the configuration 0600 with the headers read now and the current generation pinned', async () => {
    const store = ssm();
    await store.create(
      secretName,
      Buffer.from('{"authorization":"Bearer first","x-scope-orgid":"tenant-1"}'),
    );
    const flags = [
      '--mtls',
      'true',
      '--ca-file',
      path.join(telemetry, 'otel-logs-ca.pem'),
      '--headers-provider',
      'aws-parameter-store',
    ];
    const first = run(flags);
    expect({ code: first.code, stderr: first.code === 0 ? '' : first.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(out)).mode & 0o777).toBe(0o700);
    const gen1 = path.join(telemetry, 'otel-logs-generations/gen-1');
    expect(output()).toMatchObject({
      header: ['authorization Bearer first', 'x-scope-orgid tenant-1'],
      'tls.crt_file': `${gen1}/client.crt`,
      'tls.key_file': `${gen1}/client.key`,
      'tls.ca_file': path.join(telemetry, 'otel-logs-ca.pem'),
      'tls.verify': 'on',
      'tls.verify_hostname': 'on',
    });
    // The secret never reaches the log.
    expect(first.stderr).not.toContain('Bearer');

    // A renewal swaps the link and the headers change: the next start picks up both, and the
    // file is replaced by rename (a new inode), never rewritten in place; no temporary is left.
    await store.update(secretName, Buffer.from('{"authorization":"Bearer second"}'));
    generation('gen-2');
    const before = fs.statSync(out).ino;
    const held = fs.openSync(out, 'r');
    const second = run(flags);
    expect(second.code).toBe(0);
    const gen2 = path.join(telemetry, 'otel-logs-generations/gen-2');
    expect(output()).toMatchObject({
      header: ['authorization Bearer second'],
      'tls.crt_file': `${gen2}/client.crt`,
    });
    expect(fs.statSync(out).ino).not.toBe(before);
    // A reader holding the old file still reads the old configuration whole.
    expect(fs.readFileSync(held, 'utf8')).toContain('Bearer first');
    fs.closeSync(held);
    expect(fs.readdirSync(path.dirname(out))).toEqual(['podmin.yaml']);
  });

  it('reads the headers from Secrets Manager when that is the provider', async () => {
    const store = new SecretsManagerSecretStore(
      createSecretsManagerClient({
        region: emulator.region,
        endpoint: emulator.endpoint,
        credentials: emulator.credentials,
      }),
    );
    const name = `/${cluster}sm/_system/otel-logs-headers`;
    await store.create(name, Buffer.from('{"x-api-key":"k-123"}'));
    const result = spawnSync(
      process.execPath,
      [
        AGENT_BIN,
        'otel-logs-config',
        '--provider=aws',
        `--region=${emulator.region}`,
        `--cluster=${cluster}sm`,
        '--nodegroup=workers',
        '--endpoint=https://otlp.example.com:4317',
        '--protocol=grpc',
        '--headers-provider=aws-secrets-manager',
        `--out=${out}`,
        `--state-dir=${path.join(work, 'state')}`,
      ],
      { encoding: 'utf8', timeout: 60_000, env: { ...emulatorAgentEnv(emulator) } },
    );
    expect({ code: result.status, stderr: result.status === 0 ? '' : result.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    const written = output() as Output & { grpc?: string };
    expect(written).toMatchObject({ grpc: 'on', header: ['x-api-key k-123'] });
    // mtls=false and no ca=: no client files, the system trust.
    expect(written['tls.crt_file']).toBeUndefined();
    expect(written['tls.ca_file']).toBeUndefined();
  });

  it('refuses a secret that is not a JSON object of strings, naming it, and keeps the old file', async () => {
    await ssm().create(secretName, Buffer.from('["Bearer leaked"]'));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, 'previous\n', { mode: 0o600 });
    const result = run(['--headers-provider', 'aws-parameter-store']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `reading ${secretName}: the value must be a JSON object of header names to strings`,
    );
    expect(result.stderr).not.toContain('leaked');
    expect(fs.readFileSync(out, 'utf8')).toBe('previous\n');
  });

  it('fails clearly without writing when headers-secret=true but the secret is missing', () => {
    const result = run(['--headers-provider', 'aws-parameter-store']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`reading ${secretName} from aws-parameter-store`);
    expect(result.stderr).toContain('"code":"NOT_FOUND"');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('fails clearly without writing while the leaf or the CA bundle is not there yet', () => {
    fs.rmSync(path.join(telemetry, 'otel-logs'));
    const noLeaf = run(['--mtls', 'true']);
    expect(noLeaf.code).toBe(1);
    expect(noLeaf.stderr).toContain(`resolving the log-export leaf ${telemetry}/otel-logs: ENOENT`);
    const noCa = run(['--ca-file', path.join(telemetry, 'missing-ca.pem')]);
    expect(noCa.code).toBe(1);
    expect(noCa.stderr).toContain('reading the exporter CA bundle (ca=)');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('refuses bad flags with exit 2, and leaves the main mode six-flag validation as it was', () => {
    const bad = run(['--protocol', 'udp', '--mtls', 'yes', '--bucket', 'b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--protocol: must be http or grpc, not "udp"');
    expect(bad.stderr).toContain('--mtls: must be true or false, not "yes"');
    expect(bad.stderr).toContain('--bucket: is not a flag of otel-logs-config');
    const main = spawnSync(process.execPath, [AGENT_BIN, '--provider', 'aws'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(main.status).toBe(2);
    expect(main.stderr).toContain('--bucket: is required');
    expect(main.stderr).not.toContain('otel-logs-config --provider');
  });
});
