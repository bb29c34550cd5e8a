import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  GetBucketLocationCommand,
  GetPublicAccessBlockCommand,
} from '@aws-sdk/client-s3';
import { getAwsEmulator, makeTempDir, uniqueBucketName } from '@podmin/testing';
import type { AwsEmulator } from '@podmin/testing';
import { LocalBucketProvisioner } from './local-bucket-provisioner';
import { LocalDirectoryObjectStore } from './local-directory-object-store';
import { expectCode } from './object-store.contract';
import { createS3Client } from './s3-client';
import { S3BucketProvisioner } from './s3-bucket-provisioner';
import { S3ObjectStore } from './s3-object-store';

describe('S3BucketProvisioner on the moto emulator', () => {
  let emulator: AwsEmulator;
  const clients: S3Client[] = [];
  const clientFor = (region: string): S3Client => {
    const client = createS3Client({
      region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    emulator = await getAwsEmulator();
  }, 180_000);

  afterAll(() => {
    for (const client of clients) {
      client.destroy();
    }
  });

  it('creates a private bucket in us-east-1 once, then finds it', async () => {
    const client = clientFor('us-east-1');
    const bucket = uniqueBucketName('provision-use1');
    const provisioner = new S3BucketProvisioner({ client, bucket, region: 'us-east-1' });
    expect(await provisioner.ensureBucket()).toEqual({ created: true });
    expect(await provisioner.ensureBucket()).toEqual({ created: false });
    const block = await client.send(new GetPublicAccessBlockCommand({ Bucket: bucket }));
    expect(block.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      IgnorePublicAcls: true,
      BlockPublicPolicy: true,
      RestrictPublicBuckets: true,
    });
  });

  it('creates the bucket with the region as location constraint outside us-east-1', async () => {
    const client = clientFor('eu-west-1');
    const bucket = uniqueBucketName('provision-euw1');
    expect(
      await new S3BucketProvisioner({ client, bucket, region: 'eu-west-1' }).ensureBucket(),
    ).toEqual({
      created: true,
    });
    const location = await client.send(new GetBucketLocationCommand({ Bucket: bucket }));
    expect(location.LocationConstraint).toBe('eu-west-1');
  });

  it('refuses a bucket that lives in another region, naming both regions', async () => {
    const bucket = uniqueBucketName('provision-elsewhere');
    await clientFor('eu-west-1').send(
      new CreateBucketCommand({
        Bucket: bucket,
        CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' },
      }),
    );
    const err: unknown = await new S3BucketProvisioner({
      client: clientFor('us-east-1'),
      bucket,
      region: 'us-east-1',
    })
      .ensureBucket()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((err as Error).message).toContain('eu-west-1');
    expect((err as Error).message).toContain('us-east-1');
  });

  it('probes write, read and delete access and leaves nothing behind', async () => {
    const client = clientFor('us-east-1');
    const bucket = uniqueBucketName('provision-probe');
    const provisioner = new S3BucketProvisioner({
      client,
      bucket,
      region: 'us-east-1',
      probeId: () => 'fixed-id',
    });
    await provisioner.ensureBucket();
    await provisioner.probeAccess();
    expect((await new S3ObjectStore({ client, bucket }).list('')).objects).toEqual([]);
  });

  it('deletes an empty bucket, and a missing one is success', async () => {
    const client = clientFor('us-east-1');
    const bucket = uniqueBucketName('provision-delete');
    const provisioner = new S3BucketProvisioner({ client, bucket, region: 'us-east-1' });
    await provisioner.ensureBucket();
    await provisioner.deleteBucket();
    await expect(client.send(new HeadBucketCommand({ Bucket: bucket }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
    await expect(provisioner.deleteBucket()).resolves.toBeUndefined();
  });

  it('names the failed step when the bucket is missing', async () => {
    const provisioner = new S3BucketProvisioner({
      client: clientFor('us-east-1'),
      bucket: uniqueBucketName('provision-missing'),
      region: 'us-east-1',
    });
    const err: unknown = await provisioner.probeAccess().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
    expect((err as Error).message).toMatch(/^checking write access to s3:\/\//);
  });
});

describe('LocalBucketProvisioner', () => {
  it('creates the directory with mode 0700 once and probes it', async () => {
    const tmp = await makeTempDir('podmin-local-provision');
    try {
      const bucketDir = path.join(tmp.path, 'nested', 'bucket');
      const provisioner = new LocalBucketProvisioner(bucketDir, () => 'fixed-id');
      expect(await provisioner.ensureBucket()).toEqual({ created: true });
      expect((await stat(bucketDir)).mode & 0o777).toBe(0o700);
      expect(await provisioner.ensureBucket()).toEqual({ created: false });
      await provisioner.probeAccess();
      expect((await new LocalDirectoryObjectStore(bucketDir).list('')).objects).toEqual([]);
    } finally {
      await tmp.cleanup();
    }
  });

  it('reports a path that is a file, or a missing directory, as BUCKET_UNAVAILABLE', async () => {
    const tmp = await makeTempDir('podmin-local-provision');
    try {
      const file = path.join(tmp.path, 'file');
      await writeFile(file, 'x');
      await expectCode(new LocalBucketProvisioner(file).ensureBucket(), 'BUCKET_UNAVAILABLE');
      const err: unknown = await new LocalBucketProvisioner(path.join(tmp.path, 'absent'))
        .probeAccess()
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
      expect((err as Error).message).toContain('checking write access');
    } finally {
      await tmp.cleanup();
    }
  });
});
