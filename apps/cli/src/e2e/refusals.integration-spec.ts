import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  S3Client,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { daemonSetYaml, getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { sha512Hex } from '@podmin/util-desired-state';
import {
  awsConnectArgs,
  deployArgs,
  makeSandbox,
  runCli,
  snapshotDir,
  type CliRun,
  type CliSandbox,
} from './cli-harness';
import { DAEMONSET_WITH_SERVICE } from './fixtures';

// Issue 21, "Refused before it is committed": every refusal runs the real CLI and proves the
// bucket is byte-identical afterwards.

const DAEMONSET = DAEMONSET_WITH_SERVICE.split('---')[0] as string;

/** The fixture DaemonSet with `extra` inserted under its only container (indented to fit). */
function withContainerFields(extra: string): string {
  const indented = extra
    .trim()
    .split('\n')
    .map((line) => `          ${line}`)
    .join('\n');
  return DAEMONSET.replace(
    '          image: hello:v1\n',
    `          image: hello:v1\n${indented}\n`,
  );
}

/** A DaemonSet with `count` containers: small as a manifest, large as a Pod payload. */
function manyContainers(name: string, count: number): string {
  const containers = Array.from({ length: count }, (_, i) => [`c${i}`, 'hello:v1'] as const);
  return daemonSetYaml({ name, containers: Object.fromEntries(containers) });
}

/** A refusal: exit 1 for input the operation read, 2 for a flag value (a usage error). */
function expectRefusal(result: CliRun, pattern: RegExp, code: 1 | 2 = 1): void {
  expect(result.stderr).toMatch(pattern);
  expect(result.code).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^Error: /m);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe('podmin refuses input before it is committed (local bucket)', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  const podmin = (...args: string[]) => sandbox.run(args);
  const write = (file: string, text: string): void =>
    fs.writeFileSync(path.join(sandbox.cwd, file), text);

  beforeAll(async () => {
    sandbox = makeSandbox();
    bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
    expect((await podmin('connect', 'demo', '--provider', 'local')).code).toBe(0);
    // Something committed, so "unchanged" means more than "still empty".
    expect((await podmin(...deployArgs('keep', 'default', '--image', 'hello:v1'))).code).toBe(0);
  });
  afterAll(() => sandbox.cleanup());

  it('refuses a Pod payload over the agents’ read bound, naming the deployment, size and limit', async () => {
    write('big.yaml', manyContainers('big', 8000));
    expect(fs.statSync(path.join(sandbox.cwd, 'big.yaml')).size).toBeLessThan(1024 * 1024);
    const before = snapshotDir(bucket);
    const result = await podmin(...deployArgs('big', 'default', '-f', 'big.yaml'));
    expectRefusal(result, /default\/big/);
    expect(result.stderr).toMatch(/Pod payload of \d{7,} bytes/);
    expect(result.stderr).toContain('1048576');
    expect(snapshotDir(bucket)).toEqual(before);
    const validate = await podmin('validate', '-f', 'big.yaml');
    expectRefusal(validate, /1048576/);
  });

  const manifestRanges: Array<[string, string, RegExp]> = [
    [
      'containerPort -1',
      'ports:\n  - containerPort: -1',
      /ports\[0\]\.containerPort.*1 through 65535/,
    ],
    [
      'containerPort 99999999',
      'ports:\n  - containerPort: 99999999',
      /ports\[0\]\.containerPort.*1 through 65535/,
    ],
    ['containerPort 80.5', 'ports:\n  - containerPort: 80.5', /containerPort.*integer/],
    ['containerPort 1e400', 'ports:\n  - containerPort: 1e400', /out of range/],
    [
      'hostPort 70000',
      'ports:\n  - containerPort: 80\n    hostPort: 70000',
      /ports\[0\]\.hostPort.*1 through 65535/,
    ],
    [
      'an httpGet probe port -5',
      'readinessProbe:\n  httpGet:\n    port: -5',
      /readinessProbe\.httpGet\.port.*1 through 65535/,
    ],
    [
      'a tcpSocket probe port 70000',
      'livenessProbe:\n  tcpSocket:\n    port: 70000',
      /livenessProbe\.tcpSocket\.port.*1 through 65535/,
    ],
    [
      'a grpc probe port 0',
      'startupProbe:\n  grpc:\n    port: 0',
      /startupProbe\.grpc\.port.*1 through 65535/,
    ],
    [
      'a named probe port that is no port name',
      'readinessProbe:\n  httpGet:\n    port: "Not A Name"',
      /readinessProbe\.httpGet\.port/,
    ],
    [
      'a CPU limit of 1e400',
      'resources:\n  limits:\n    cpu: 1e400',
      /resources\.limits\.cpu.*out of range/,
    ],
    [
      'a CPU request below 1m',
      'resources:\n  requests:\n    cpu: "0.0000000001"',
      /resources\.requests\.cpu.*1m/,
    ],
    [
      'a memory limit beyond int64 bytes',
      'resources:\n  limits:\n    memory: 99999999999999999999999999Ei',
      /resources\.limits\.memory/,
    ],
    [
      'a malformed quantity',
      'resources:\n  limits:\n    memory: lots',
      /resources\.limits\.memory.*Kubernetes quantity/,
    ],
  ];

  it.each(manifestRanges)('refuses %s, naming the field', async (_label, extra, pattern) => {
    write('range.yaml', withContainerFields(extra));
    const before = snapshotDir(bucket);
    const result = await podmin(...deployArgs('web', 'default', '-f', 'range.yaml'));
    expectRefusal(result, pattern);
    expect(result.stderr).not.toContain('the number null');
    expect(snapshotDir(bucket)).toEqual(before);
  });

  it('accepts ports, named probe ports and quantities kubelet accepts', async () => {
    write(
      'fine.yaml',
      withContainerFields(
        [
          'ports:',
          '  - containerPort: 8443',
          '    name: https',
          'readinessProbe:',
          '  httpGet:',
          '    port: https',
          'livenessProbe:',
          '  tcpSocket:',
          '    port: 8443',
          'resources:',
          '  requests:',
          '    cpu: 250m',
          '    memory: 64Mi',
          '  limits:',
          '    cpu: 1',
          '    memory: 1Gi',
        ].join('\n'),
      ),
    );
    const result = await podmin('validate', '-f', 'fine.yaml');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  const flagRanges: Array<[string, string[], RegExp]> = [
    ['--cpu=1e400', ['--cpu', '1e400'], /--cpu.*out of range/],
    ['--cpu=0.0000000001', ['--cpu', '0.0000000001'], /--cpu.*1m/],
    [
      '--memory=99999999999999999999999999Ei',
      ['--memory', '99999999999999999999999999Ei'],
      /--memory.*(out of range|at most)/,
    ],
  ];

  it.each(flagRanges)('refuses %s, naming the flag and what is allowed', async (_l, flags, re) => {
    const before = snapshotDir(bucket);
    const result = await podmin(...deployArgs('web', 'default', '--image', 'hello:v1', ...flags));
    expectRefusal(result, re, 2);
    expect(snapshotDir(bucket)).toEqual(before);
  });

  it('reads /dev/urandom bounded: fails fast naming the file and the limit', async () => {
    const started = Date.now();
    const result = await podmin('validate', '-f', '/dev/urandom');
    expectRefusal(result, /\/dev\/urandom/);
    expect(result.stderr).toContain('1048576');
    expect(result.stderr).not.toContain('Invalid string length');
    expect(Date.now() - started).toBeLessThan(5000);
    const deploy = await podmin(...deployArgs('web', 'default', '-f', '/dev/urandom'));
    expectRefusal(deploy, /\/dev\/urandom.*1048576/);
  });

  it('says a directory is a directory', async () => {
    const result = await podmin('validate', '-f', '/tmp');
    expectRefusal(result, /\/tmp.*is a directory/);
    expect(result.stderr).not.toContain('EISDIR: illegal operation');
  });

  it('says a deeply nested file is nested too deeply, with the limit', async () => {
    write('deep.yaml', `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    const flow = await podmin('validate', '-f', 'deep.yaml');
    expectRefusal(flow, /nested too deeply \(limit \d+\)/);
    expect(flow.stderr).not.toContain('Maximum call stack');
    const block = Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    write('deep-block.yaml', `${block} x\n`);
    expectRefusal(await podmin('validate', '-f', 'deep-block.yaml'), /nested too deeply/);
  });

  it('escapes control characters it echoes', async () => {
    write('nul.yaml', DAEMONSET.replace('  name: web\n', '  name: "w\\0e\\x1b[2Jb"\n'));
    const result = await podmin('validate', '-f', 'nul.yaml');
    expectRefusal(result, /metadata\.name/);
    const controls = [...result.stderr].filter((c) => c !== '\n' && (c < ' ' || c === '\u007f'));
    expect(controls).toEqual([]);
    expect(result.stderr).toContain('w\\x00e\\x1b[2Jb');
    const flag = await podmin(...deployArgs('web', 'default', '--image', 'w\u0007b=hello:v1'));
    expect(flag.code).toBe(2);
    expect(flag.stderr).not.toContain('\u0007');
    expect(flag.stderr).toContain('\\x07');
  });

  it('verifies a payload already at its key and repairs a corrupt one', async () => {
    expect((await podmin(...deployArgs('fix', 'default', '--image', 'hello:v1'))).code).toBe(0);
    const index = JSON.parse(
      fs.readFileSync(path.join(bucket, 'deployments', 'index.json'), 'utf8'),
    ) as Record<string, { pod: string }>;
    const key = index['default/fix']!.pod;
    const file = path.join(bucket, key);
    const good = fs.readFileSync(file);
    fs.writeFileSync(file, 'corrupt\n');
    // Unchanged entry: the payload it points at is verified and rewritten all the same.
    const again = await podmin(...deployArgs('fix', 'default', '--image', 'hello:v1'));
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Repaired');
    expect(fs.readFileSync(file)).toEqual(good);
    // A new entry reusing a corrupt payload.
    expect((await podmin('delete', 'fix', '-g', 'default')).code).toBe(0);
    fs.writeFileSync(file, good.subarray(0, 10));
    const redeploy = await podmin(...deployArgs('fix', 'default', '--image', 'hello:v1'));
    expect(redeploy.code).toBe(0);
    expect(sha512Hex(fs.readFileSync(file))).toBe(sha512Hex(good));
  });

  it('leaves nothing behind when connect fails on a bad config, and its hint is true', async () => {
    const fresh = makeSandbox();
    try {
      const configDir = path.join(fresh.configHome, 'podmin');
      fs.mkdirSync(configDir, { recursive: true });
      const config = path.join(configDir, 'config.json');
      fs.writeFileSync(config, '{"contexts": ');
      // Every run may add to the CLI's own start-up code cache (one file per bundle chunk it
      // loads, tools/scripts/bundle.mjs): that is not state the command leaves, so it is left out.
      const codeCache = path.relative(fresh.home, path.join(fresh.cacheHome, 'podmin', 'v8'));
      const state = (): Record<string, string> =>
        Object.fromEntries(
          Object.entries(snapshotDir(fresh.home)).filter(([p]) => !p.startsWith(codeCache)),
        );
      const dirs = (): string[] => listDirs(fresh.home).filter((d) => !d.startsWith(codeCache));
      expect((await fresh.run(['--version'])).code).toBe(0);
      const before = state();
      const dirsBefore = dirs();
      const result = await fresh.run(['connect', 'demo', '--provider', 'local']);
      expectRefusal(result, /config\.json/);
      expect(state()).toEqual(before);
      expect(dirs()).toEqual(dirsBefore);
      // Doing what the hint says makes connect work.
      const hint = /^Hint: (.*)$/m.exec(result.stderr)?.[1] ?? '';
      expect(hint).toMatch(/move|rename/i);
      expect(hint).not.toMatch(/connect` recreates/);
      fs.renameSync(config, `${config}.bak`);
      expect((await fresh.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
    } finally {
      fresh.cleanup();
    }
  });

  it('names the command and the lock file when the lock cannot be created', async () => {
    const fresh = makeSandbox();
    try {
      // An unprivileged user in a config directory it cannot write: EACCES on the lock file.
      fs.chmodSync(fresh.home, 0o755);
      const configDir = path.join(fresh.configHome, 'podmin');
      fs.mkdirSync(configDir, { recursive: true, mode: 0o755 });
      const bucketDir = path.join(fresh.home, 'nobody-bucket');
      fs.mkdirSync(bucketDir, { mode: 0o777 });
      fs.chmodSync(bucketDir, 0o777);
      const result = await runAsNobody(fresh, [
        'connect',
        'demo',
        '--provider',
        'local',
        '--bucket',
        bucketDir,
      ]);
      expectRefusal(result, /podmin connect/);
      expect(result.stderr).toContain(path.join(configDir, '.config.json.lock'));
      expect(result.stderr).toMatch(/EACCES|permission denied/);
    } finally {
      fresh.cleanup();
    }
  });
});

function listDirs(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const p = path.join(dir, entry.name);
      out.push(path.relative(root, p));
      walk(p);
    }
  };
  walk(root);
  return out.sort();
}

/** Runs the bundled CLI as user and group 65534 (needs root, which these tests run as). */
function runAsNobody(sandbox: CliSandbox, args: string[]): Promise<CliRun> {
  return runCli(args, {
    cwd: sandbox.home,
    env: sandbox.env,
    via: ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'],
  });
}

describe('podmin verifies reused payloads on an S3 bucket (emulator)', () => {
  let sandbox: CliSandbox;
  let client: S3Client;
  const bucket = uniqueBucketName('podmin-refuse');
  const podmin = (...args: string[]) => sandbox.run(args);
  const read = async (key: string): Promise<Buffer> => {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  };
  const snapshot = async (): Promise<Record<string, string>> => {
    const result: Record<string, string> = {};
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    for (const o of page.Contents ?? [])
      result[o.Key!] = crypto
        .createHash('sha256')
        .update(await read(o.Key!))
        .digest('hex');
    return result;
  };

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    client = new S3Client({
      endpoint: emulator.endpoint,
      region: emulator.region,
      credentials: emulator.credentials,
      forcePathStyle: true,
    });
    sandbox = makeSandbox({
      AWS_ENDPOINT_URL_S3: emulator.endpoint,
      AWS_ENDPOINT_URL_SSM: emulator.endpoint,
      AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
    });
    const connected = await podmin(...awsConnectArgs('demo', emulator.region, bucket));
    expect(connected.code).toBe(0);
  });
  afterAll(() => sandbox.cleanup());

  it('rewrites a corrupt Pod and Service payload instead of trusting them', async () => {
    const args = deployArgs('web', 'default', '--image', 'hello:v1', '--service');
    expect((await podmin(...args)).code).toBe(0);
    const index = JSON.parse((await read('deployments/index.json')).toString()) as Record<
      string,
      { pod: string; service: string }
    >;
    const entry = index['default/web']!;
    const pod = await read(entry.pod);
    const service = await read(entry.service);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: entry.pod, Body: 'garbage' }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: entry.service, Body: '' }));
    expect((await podmin('delete', 'web', '-g', 'default')).code).toBe(0);
    const result = await podmin(...args);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Repaired');
    expect(await read(entry.pod)).toEqual(pod);
    expect(await read(entry.service)).toEqual(service);
  });

  it('refuses an oversized Pod payload before writing anything', async () => {
    fs.writeFileSync(path.join(sandbox.cwd, 'big.yaml'), manyContainers('big', 8000));
    const before = await snapshot();
    const result = await podmin(...deployArgs('big', 'default', '-f', 'big.yaml'));
    expectRefusal(result, /default\/big.*1048576/s);
    expect(await snapshot()).toEqual(before);
  });
});
