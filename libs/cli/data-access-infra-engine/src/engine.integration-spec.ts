import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { describeIf, findTestInfraEngine, getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { readModuleDir, serializeModuleVars, type ModuleVars } from '@podmin/cli-util-infra';
import { hasCode } from '@podmin/util-errors';
import { InfraEngine, StateLockedError, writeWorkDir } from './engine';

const engine = findTestInfraEngine();
const PLACEHOLDER = path.join(__dirname, 'fixtures/placeholder-aws-module');
const KEY = 'tfstate/podmin.tfstate';

const vars = (size: number): ModuleVars => ({
  cluster: 'demo',
  region: 'us-east-1',
  bucket: 'b',
  vpc_cidr: '10.0.0.0/16',
  existing_vpc_id: null,
  amis: { arm64: 'ami-1' },
  nat64: { instance_type: 't4g.nano', arch: 'arm64' },
  nat64_generation: 'g1',
  nodegroups: {
    default: {
      size,
      disk_size: 20,
      instance_type: 't4g.small',
      zone: 'us-east-1a',
      arch: 'arm64',
      nat64: null,
      user_data: '#!/bin/sh\n',
    },
  },
});

// Runs with or without an engine, so this file always has a test that can fail.
describe('InfraEngine with an executable that cannot start', () => {
  it('fails with NOT_FOUND naming the executable and PODMIN_TF_CMD', async () => {
    const missing = path.join(os.tmpdir(), `podmin-no-engine-${process.pid}`, 'tofu');
    const infra = new InfraEngine({
      executable: missing,
      workDir: os.tmpdir(),
      env: { PATH: process.env['PATH'] },
      output: () => undefined,
    });
    const err = await infra.version().catch((e: unknown) => e);
    expect(hasCode(err, 'NOT_FOUND')).toBe(true);
    expect(err).toMatchObject({
      message: `running OpenTofu/Terraform (${missing}): spawn ${missing} ENOENT`,
      hint: expect.stringContaining('PODMIN_TF_CMD'),
    });
  });
});

describeIf(
  engine !== undefined,
  'engine',
  'no OpenTofu/Terraform (tools/infra-stack/build.sh or PATH); InfraEngine runs not tested',
)(`InfraEngine with ${engine?.executable ?? 'OpenTofu/Terraform'} against the emulator`, () => {
  let s3: S3Client;
  let bucket: string;
  let workDir: string;
  let output: string;
  let infra: InfraEngine;
  let endpoint: string;

  beforeAll(async () => {
    const emulator = await getAwsEmulator();
    endpoint = emulator.endpoint;
    s3 = new S3Client({
      endpoint,
      region: emulator.region,
      credentials: emulator.credentials,
      forcePathStyle: true,
    });
    bucket = uniqueBucketName('podmin-engine');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-engine-it-'));
    output = '';
    infra = new InfraEngine({
      executable: engine!.executable,
      workDir,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
        AWS_ENDPOINT_URL: endpoint,
        AWS_REGION: emulator.region,
        TF_PLUGIN_CACHE_DIR: path.join(workDir, '..', `${path.basename(workDir)}-plugins`),
        ...engine!.env,
      },
      output: (chunk) => (output += chunk),
    });
  }, 60_000);

  afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

  it('reports a version of at least 1.11', async () => {
    expect(await infra.version()).toMatch(/^1\.(1[1-9]|[2-9]\d)\./);
  });

  it('initializes the S3 backend, plans with changes, applies, and plans clean after', async () => {
    await writeWorkDir(workDir, readModuleDir(PLACEHOLDER), serializeModuleVars(vars(1)));
    await infra.init({ bucket, key: KEY, region: 'us-east-1', endpoint });
    expect(await infra.plan('setup.tfplan')).toBe(true);
    await infra.apply('setup.tfplan');
    const state = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: KEY }));
    const text = await state.Body!.transformToString();
    expect(text).toContain('terraform_data');
    expect(text).toContain('us-east-1a');
    // The lockfile is gone after a clean run.
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${KEY}.tflock` })),
    ).rejects.toMatchObject({ name: 'NotFound' });
    await writeWorkDir(workDir, readModuleDir(PLACEHOLDER), serializeModuleVars(vars(1)));
    expect(fs.existsSync(path.join(workDir, '.terraform'))).toBe(true);
    await infra.init({ bucket, key: KEY, region: 'us-east-1', endpoint });
    expect(await infra.plan('setup.tfplan')).toBe(false);
  }, 120_000);

  it('rejects inputs that break the module contract with the engine’s own message', async () => {
    const bad = JSON.parse(serializeModuleVars(vars(1))) as Record<string, unknown>;
    bad['nodegroups'] = { default: { size: 'many' } };
    await writeWorkDir(workDir, readModuleDir(PLACEHOLDER), JSON.stringify(bad));
    output = '';
    await expect(infra.plan('setup.tfplan')).rejects.toMatchObject({
      message: expect.stringContaining('running OpenTofu/Terraform plan: it exited with 1'),
    });
    expect(output).toMatch(/Invalid value for input variable|Invalid value for variable/);
  }, 60_000);

  it('detects a stale state lock with its ID and releases it with force-unlock', async () => {
    await writeWorkDir(workDir, readModuleDir(PLACEHOLDER), serializeModuleVars(vars(2)));
    const lockId = '6f1c3a52-7d0e-4b8f-9a21-0c5e3d7b9f10';
    // What an interrupted run leaves behind: the S3 lockfile with the lock info.
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${KEY}.tflock`,
        Body: JSON.stringify({
          ID: lockId,
          Operation: 'OperationTypeApply',
          Info: '',
          Who: 'ops@crashed-laptop',
          Version: '1.11.0',
          Created: '2026-01-01T00:00:00Z',
          Path: `${bucket}/${KEY}`,
        }),
      }),
    );
    const err = await infra.plan('setup.tfplan').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateLockedError);
    expect((err as StateLockedError).lockId).toBe(lockId);
    expect((err as StateLockedError).hint).toContain(`force-unlock ${lockId}`);
    await infra.forceUnlock(lockId);
    expect(await infra.plan('setup.tfplan')).toBe(true);
  }, 120_000);

  it('plans and applies the destruction of everything', async () => {
    await writeWorkDir(workDir, readModuleDir(PLACEHOLDER), serializeModuleVars(vars(1)));
    expect(await infra.plan('teardown.tfplan', { destroy: true })).toBe(true);
    await infra.apply('teardown.tfplan');
    const state = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: KEY }));
    expect(await state.Body!.transformToString()).not.toContain('terraform_data');
    expect(await infra.plan('teardown.tfplan', { destroy: true })).toBe(false);
  }, 120_000);
});
