import crypto from 'node:crypto';
import {
  S3Client,
  GetObjectCommand,
  ListObjectsV2Command,
  HeadBucketCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { getAwsEmulator, uniqueBucketName } from '@podmin/testing';
import { makeSandbox } from './cli-harness';
import { describeCliFlows } from './cli-flows';

/** Reads the whole bucket through a real S3 client against the emulator. */
async function s3Store(bucket: string) {
  const emulator = await getAwsEmulator();
  const client = new S3Client({
    endpoint: emulator.endpoint,
    region: emulator.region,
    credentials: emulator.credentials,
    forcePathStyle: true,
  });
  const read = async (key: string): Promise<Buffer> => {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  };
  const snapshot = async (): Promise<Record<string, string>> => {
    const result: Record<string, string> = {};
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? [])
        result[o.Key!] = crypto
          .createHash('sha256')
          .update(await read(o.Key!))
          .digest('hex');
      token = page.NextContinuationToken;
    } while (token);
    return result;
  };
  const write = async (key: string, body: string): Promise<void> => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  };
  return { client, emulator, read, snapshot, write };
}

describeCliFlows('an S3 bucket on the emulator', async () => {
  const bucket = uniqueBucketName('podmin-e2e');
  const { emulator, read, snapshot, client, write } = await s3Store(bucket);
  const sandbox = makeSandbox({
    AWS_ENDPOINT_URL_S3: emulator.endpoint,
    AWS_ENDPOINT_URL_SSM: emulator.endpoint,
    AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
  });
  return {
    sandbox,
    store: {
      connectArgs: ['--provider', 'aws', '--region', emulator.region, '--bucket', bucket],
      env: {},
      snapshot: async () => {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
        return snapshot();
      },
      read,
      write,
    },
  };
});
