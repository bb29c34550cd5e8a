import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { findTestInfraEngine, getAwsEmulator, itIf, uniqueBucketName } from '@podmin/testing';
import { awsConnectArgs, makeSandbox, runCli, type CliRun, type CliSandbox } from './cli-harness';

const REPO = path.resolve(__dirname, '../../../..');
const PLACEHOLDER = path.join(
  REPO,
  'libs/cli/data-access-infra-engine/src/fixtures/placeholder-aws-module',
);
const STATE = 'tfstate/podmin.tfstate';
const engine = findTestInfraEngine();

/** Jest's `it` for a test that needs the engine; without one its skip, with the SKIPPED line. */
const itWithEngine = itIf(
  engine !== undefined,
  'infra-e2e',
  'no OpenTofu/Terraform (tools/infra-stack/build.sh or PATH)',
);

/** Runs a CLI bundle at `bin` (not the default one) in the sandbox. */
function runBundle(bin: string, sandbox: CliSandbox, args: string[]): Promise<CliRun> {
  return runCli(args, { cwd: sandbox.cwd, env: sandbox.env, bin });
}

describe('podmin setup/teardown/destroy on AWS (bundled CLI, emulator)', () => {
  let sandbox: CliSandbox;
  let s3: S3Client;
  let ssm: SSMClient;
  let bucket: string;
  let region: string;
  /** `podmin connect demo` to this file's bucket in the emulator. */
  const connectArgs = () => awsConnectArgs('demo', region, bucket);
  let endpoint: string;

  const listKeys = async (): Promise<string[]> => {
    const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  };

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    endpoint = emulator.endpoint;
    region = emulator.region;
    const clientConfig = { endpoint, region, credentials: emulator.credentials };
    s3 = new S3Client({ ...clientConfig, forcePathStyle: true });
    ssm = new SSMClient(clientConfig);
    bucket = uniqueBucketName('podmin-infra-e2e');
    sandbox = makeSandbox({
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
      ...(engine === undefined ? {} : { PODMIN_TF_CMD: engine.executable, ...engine.env }),
    });
    const connected = await sandbox.run(connectArgs());
    expect(connected.code).toBe(0);
  }, 60_000);

  afterAll(() => sandbox?.cleanup());

  it('explains the flags of setup, teardown and destroy with examples', async () => {
    const setup = await sandbox.run(['setup', '--help']);
    expect(setup.code).toBe(0);
    for (const text of [
      '--vpc-cidr',
      '--nodegroup',
      'disk-size=GIB',
      '--nat64',
      'instance-type=TYPE',
      '-y, --yes',
      'OpenTofu/Terraform',
      'Examples:',
      'workers,size=3,disk-size=100',
    ]) {
      expect(setup.stdout).toContain(text);
    }
    const teardown = await sandbox.run(['teardown', '--help']);
    expect(teardown.stdout).toContain('force-unlock');
    expect(teardown.stdout).toContain('Examples:');
    const destroy = await sandbox.run(['destroy', '--help']);
    expect(destroy.stdout).toMatch(/both CA secrets[\s\S]*Examples:/);
  });

  it('rejects every bad setup flag before anything runs, writing nothing', async () => {
    const before = await listKeys();
    const run = await sandbox.run([
      'setup',
      '--vpc-cidr',
      '8.8.0.0/16',
      '--nodegroup',
      'Bad',
      '--nodegroup',
      'ok,disk-size=7,zone=B,color=red',
      '--nodegroup',
      'ok',
      '--nat64=type=t4g.nano',
      '-y',
    ]);
    expect(run.code).toBe(2);
    for (const text of [
      '--vpc-cidr: "8.8.0.0/16" is not private',
      '--nodegroup[0]: NodeGroup name "Bad" is invalid',
      'disk-size: "7" is not an integer number of GiB from 8 through 16384',
      'zone: "B" is neither a zone name',
      'unknown key "color"',
      '--nodegroup[2]: NodeGroup ok is given more than once',
      '--nat64: "type=t4g.nano" is not allowed',
    ]) {
      expect(run.stderr).toContain(text);
    }
    expect(await listKeys()).toEqual(before);
    expect(
      fs.existsSync(path.join(sandbox.env['XDG_CACHE_HOME']!, 'podmin', 'infrastructure')),
    ).toBe(false);
  });

  // The engine is found before anything else, so this too needs one.
  itWithEngine(
    'fails without a terminal and without -y before asking the provider',
    async () => {
      const run = await sandbox.run([
        'setup',
        '--vpc-cidr',
        '10.0.0.0/16',
        '--nodegroup',
        'default',
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('confirmation is required and there is no terminal to ask on');
    },
    30_000,
  );

  itWithEngine(
    'reports provider problems from EC2 before writing anything',
    async () => {
      const before = await listKeys();
      const run = await sandbox.run([
        'setup',
        '--vpc-cidr',
        '10.0.0.0/16',
        '-y',
        '--nodegroup',
        `a,zone=z`,
        '--nodegroup',
        'b,instance-type=t2.micro',
        '--nodegroup',
        'c,instance-type=x9.huge',
      ]);
      // Flag values EC2 cannot honour: a usage error like any other refused value.
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Using OpenTofu/Terraform');
      expect(run.stderr).toMatch(/z is not an available zone of us-east-1; available: us-east-1a/);
      expect(run.stderr).toContain('t2.micro is not a Nitro instance type');
      expect(run.stderr).toContain('x9.huge is not an instance type EC2 offers in us-east-1');
      expect(await listKeys()).toEqual(before);
      expect(
        fs.existsSync(path.join(sandbox.env['XDG_CACHE_HOME']!, 'podmin', 'infrastructure')),
      ).toBe(false);
    },
    60_000,
  );

  itWithEngine(
    'tears down after disconnect from the bucket’s inputs with the embedded module, reports a stale lock, and destroys everything',
    async () => {
      // A bundle that embeds the placeholder module, run from outside the checkout.
      const binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-bundle-'));
      const bin = path.join(binDir, 'podmin.cjs');
      execFileSync(process.execPath, [path.join(REPO, 'tools/scripts/bundle.mjs'), 'cli'], {
        cwd: REPO,
        env: { ...process.env, PODMIN_BUNDLE_OUT: bin, PODMIN_BUNDLE_INFRA_MODULE: PLACEHOLDER },
        stdio: 'ignore',
      });
      // What an earlier setup left: inputs in the bucket, state from a real apply, both CAs.
      const vars = {
        cluster: 'demo',
        region,
        bucket,
        vpc_cidr: '10.0.0.0/16',
        existing_vpc_id: null,
        amis: { arm64: 'ami-1' },
        nat64: null,
        nat64_generation: 'g1',
        nodegroups: {
          default: {
            size: 1,
            disk_size: 20,
            instance_type: 't4g.small',
            zone: `${region}a`,
            arch: 'arm64',
            nat64: null,
            user_data: '#!/bin/sh\n',
          },
        },
      };
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'tfstate/podmin.auto.tfvars.json',
          Body: JSON.stringify(vars),
        }),
      );
      const seedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-seed-'));
      fs.copyFileSync(path.join(PLACEHOLDER, 'main.tf'), path.join(seedDir, 'main.tf'));
      fs.writeFileSync(path.join(seedDir, 'podmin.auto.tfvars.json'), JSON.stringify(vars));
      const tf = (...args: string[]) =>
        execFileSync(engine!.executable, [`-chdir=${seedDir}`, ...args], {
          env: { ...sandbox.env, ...engine!.env, AWS_REGION: region },
          stdio: 'ignore',
        });
      tf(
        'init',
        '-input=false',
        `-backend-config=bucket=${bucket}`,
        `-backend-config=key=${STATE}`,
        `-backend-config=region=${region}`,
        '-backend-config=use_path_style=true',
        `-backend-config=endpoints={s3="${endpoint}"}`,
      );
      tf('apply', '-input=false', '-auto-approve');
      for (const name of ['/demo/_system/workload-ca-key', '/demo/_system/cluster-ca']) {
        await ssm.send(
          new PutParameterCommand({
            Name: name,
            Value: 'x',
            Type: 'SecureString',
            Overwrite: true,
          }),
        );
      }

      expect((await sandbox.run(['disconnect', 'demo'])).code).toBe(0);
      const reconnected = await sandbox.run(connectArgs());
      expect(reconnected.code).toBe(0);

      // A stale lock: reported with its ID and the force-unlock command, never forced with -y.
      const lockId = '0b7e2c4a-1f3d-4e5a-8b6c-9d0e1f2a3b4c';
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `${STATE}.tflock`,
          Body: JSON.stringify({
            ID: lockId,
            Operation: 'OperationTypeApply',
            Info: '',
            Who: 'ops@gone',
            Version: '1.11.0',
            Created: '2026-01-01T00:00:00Z',
            Path: `${bucket}/${STATE}`,
          }),
        }),
      );
      const locked = await runBundle(bin, sandbox, ['teardown', '-y']);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toContain(`the state is locked (lock ID ${lockId})`);
      expect(locked.stderr).toContain(`force-unlock ${lockId}`);
      expect(await listKeys()).toContain(`${STATE}.tflock`);
      execFileSync(
        engine!.executable,
        [
          `-chdir=${path.join(sandbox.env['XDG_CACHE_HOME']!, 'podmin/infrastructure/demo')}`,
          'force-unlock',
          '-force',
          lockId,
        ],
        {
          env: { ...sandbox.env, ...engine!.env, AWS_REGION: region },
          stdio: 'ignore',
        },
      );

      const teardown = await runBundle(bin, sandbox, ['teardown', '-y']);
      expect(teardown.stderr).toContain('Tore down demo');
      expect(teardown.code).toBe(0);
      const workDir = path.join(sandbox.env['XDG_CACHE_HOME']!, 'podmin/infrastructure/demo');
      expect(fs.readFileSync(path.join(workDir, 'main.tf'), 'utf8')).toBe(
        fs.readFileSync(path.join(PLACEHOLDER, 'main.tf'), 'utf8'),
      );
      expect(
        JSON.parse(fs.readFileSync(path.join(workDir, 'podmin.auto.tfvars.json'), 'utf8')),
      ).toEqual(JSON.parse(JSON.stringify(vars)));
      const state = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: STATE }));
      expect(await state.Body!.transformToString()).not.toContain('terraform_data');
      // Bucket, context and CAs are kept.
      expect(await listKeys()).toContain('tfstate/podmin.auto.tfvars.json');
      expect(
        (await ssm.send(new GetParameterCommand({ Name: '/demo/_system/cluster-ca' }))).Parameter
          ?.Name,
      ).toBe('/demo/_system/cluster-ca');
      expect(
        fs.readFileSync(path.join(sandbox.env['XDG_CONFIG_HOME']!, 'podmin/config.json'), 'utf8'),
      ).toContain('"demo"');

      const unconfirmed = await runBundle(bin, sandbox, ['destroy']);
      expect(unconfirmed.code).toBe(1);
      expect(unconfirmed.stderr).toContain('confirmation is required');
      await s3.send(new HeadBucketCommand({ Bucket: bucket }));

      const destroyed = await runBundle(bin, sandbox, ['destroy', '-y']);
      expect(destroyed.stderr).toContain('Destroyed demo and removed its context');
      expect(destroyed.code).toBe(0);
      await expect(s3.send(new HeadBucketCommand({ Bucket: bucket }))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 404 },
      });
      await expect(
        ssm.send(new GetParameterCommand({ Name: '/demo/_system/cluster-ca' })),
      ).rejects.toMatchObject({ name: 'ParameterNotFound' });
      await expect(
        ssm.send(new GetParameterCommand({ Name: '/demo/_system/workload-ca-key' })),
      ).rejects.toMatchObject({ name: 'ParameterNotFound' });
      expect(
        fs.readFileSync(path.join(sandbox.env['XDG_CONFIG_HOME']!, 'podmin/config.json'), 'utf8'),
      ).not.toContain('"demo"');
      fs.rmSync(binDir, { recursive: true, force: true });
      fs.rmSync(seedDir, { recursive: true, force: true });
    },
    240_000,
  );
});
