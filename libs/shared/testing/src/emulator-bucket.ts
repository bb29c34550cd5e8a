import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { getAwsEmulator, type AwsEmulator } from './aws-emulator';
import { uniqueBucketName } from './bucket-name';

/** A new bucket in the AWS-API emulator and the client that created it. */
export interface EmulatorBucket<C extends S3Client> {
  emulator: AwsEmulator;
  client: C;
  bucket: string;
}

/**
 * Creates a uniquely named bucket (`<prefix>-…`) in the emulator with a client made by
 * `makeClient` (the project's own `createS3Client`, so tests use the production configuration).
 */
export async function emulatorBucket<C extends S3Client>(
  prefix: string,
  makeClient: (config: Pick<AwsEmulator, 'region' | 'endpoint' | 'credentials'>) => C,
): Promise<EmulatorBucket<C>> {
  const emulator = await getAwsEmulator();
  const client = makeClient({
    region: emulator.region,
    endpoint: emulator.endpoint,
    credentials: emulator.credentials,
  });
  const bucket = uniqueBucketName(prefix);
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return { emulator, client, bucket };
}
