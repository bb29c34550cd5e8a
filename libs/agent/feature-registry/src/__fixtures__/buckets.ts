// The two kinds of bucket the registry reads, each opened twice: as the CLI writes it and as the
// registry process opens it, so the integration specs run every case against both.
import { rename } from 'node:fs/promises';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
  type ObjectStore,
} from '@podmin/data-access-object-store';
import { AGENT_PROVIDERS, openBucketStore } from '@podmin/agent-data-access-node';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import { emulatorBucket, localAgentArgs, makeTempDir } from '@podmin/testing';
import type { RegistryStore } from '../registry.ports';

/** A bucket under test: where the CLI-side store writes and the registry's adapter reads. */
export interface RegistryBucket {
  objects: ObjectStore;
  registryStore: RegistryStore;
  /** Makes the bucket disappear while the registry runs (renamed away, or deleted). */
  remove: () => Promise<void>;
  cleanup: () => Promise<void>;
}

/** `[kind, make(name)]` for a local directory and an S3 emulator bucket, named after `name`. */
export const REGISTRY_BUCKETS: Array<[string, (name: string) => Promise<RegistryBucket>]> = [
  [
    'local directory',
    async (name) => {
      const dir = await makeTempDir(`podmin-${name}`);
      return {
        objects: new LocalDirectoryObjectStore(dir.path),
        // A second store on the same directory, opened as the registry process opens it.
        registryStore: openBucketStore(
          parseAgentProcessConfig(
            localAgentArgs(dir.path),
            { PODMIN_NODE_ROOT: dir.path },
            AGENT_PROVIDERS,
          ),
          {},
        ),
        remove: () => rename(dir.path, `${dir.path}.gone`),
        cleanup: dir.cleanup,
      };
    },
  ],
  [
    'S3 emulator',
    async (name) => {
      const { client, bucket } = await emulatorBucket(name, createS3Client);
      return {
        objects: new S3ObjectStore({ client, bucket }),
        registryStore: new S3ObjectStore({ client, bucket }),
        remove: async () => {
          const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
          for (const o of page.Contents ?? [])
            await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
          await client.send(new DeleteBucketCommand({ Bucket: bucket }));
        },
        cleanup: () => Promise.resolve(client.destroy()),
      };
    },
  ],
];
