import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import { emulatorBucket, makeTempDir } from '@podmin/testing';

/** A fresh bucket for one test, with what a registry process needs to serve from it. */
export interface TestBucket {
  objects: ObjectStore;
  /** The registry's `--provider … --bucket … --region …` for this bucket. */
  registryFlags: string[];
  /** The registry's extra environment (the emulator's endpoint and credentials). */
  registryEnv: Record<string, string>;
  /** An object's bytes, read the way the test needs (not through the code under test). */
  read: (key: string) => Promise<Buffer>;
  cleanup: () => Promise<void>;
}

/**
 * Both kinds of bucket, for `describe.each`: a local directory, and an S3 bucket named
 * `<prefix>-…` on the AWS-API emulator.
 */
export function testBuckets(prefix: string): Array<[string, () => Promise<TestBucket>]> {
  return [
    [
      'local directory',
      async () => {
        const dir = await makeTempDir(`${prefix}-bucket`);
        return {
          objects: new LocalDirectoryObjectStore(dir.path),
          registryFlags: ['--provider', 'local', '--bucket', dir.path, '--region', 'local'],
          registryEnv: {},
          read: (key) => readFile(path.join(dir.path, key)),
          cleanup: dir.cleanup,
        };
      },
    ],
    [
      'S3 emulator',
      async () => {
        const { emulator, client, bucket } = await emulatorBucket(prefix, createS3Client);
        const objects = new S3ObjectStore({ client, bucket });
        return {
          objects,
          registryFlags: ['--provider', 'aws', '--bucket', bucket, '--region', emulator.region],
          registryEnv: {
            AWS_ENDPOINT_URL_S3: emulator.endpoint,
            AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
            AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
          read: async (key) => (await objects.get(key, { maxBytes: 64 * 1024 * 1024 })).body,
          cleanup: () => Promise.resolve(client.destroy()),
        };
      },
    ],
  ];
}
