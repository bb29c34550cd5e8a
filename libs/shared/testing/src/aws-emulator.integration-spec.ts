import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getAwsEmulator } from './aws-emulator';

describe('getAwsEmulator', () => {
  it('returns one loopback S3 endpoint that a real client can use', async () => {
    const emulator = await getAwsEmulator();
    expect(emulator.endpoint).toMatch(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+$/);
    expect(emulator.region).toBe('us-east-1');
    expect(await getAwsEmulator()).toEqual(emulator);

    const client = new S3Client({
      endpoint: emulator.endpoint,
      region: emulator.region,
      credentials: emulator.credentials,
      forcePathStyle: true,
    });
    try {
      await client.send(new CreateBucketCommand({ Bucket: 'podmin-testing-emulator' }));
      await client.send(
        new PutObjectCommand({ Bucket: 'podmin-testing-emulator', Key: 'k', Body: 'v' }),
      );
      const got = await client.send(
        new GetObjectCommand({ Bucket: 'podmin-testing-emulator', Key: 'k' }),
      );
      expect(await got.Body?.transformToString()).toBe('v');
    } finally {
      client.destroy();
    }
  }, 180_000);
});
