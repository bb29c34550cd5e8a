import { rename } from 'node:fs/promises';
import request from 'supertest';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  LocalDirectoryObjectStore,
  S3ObjectStore,
  createS3Client,
} from '@podmin/data-access-object-store';
import type { ObjectStore } from '@podmin/data-access-object-store';
import { emulatorBucket, localAgentArgs, makeTempDir } from '@podmin/testing';
import { JsonLogger } from '@podmin/agent-util-logging';
import { AGENT_PROVIDERS, openBucketStore } from '@podmin/agent-data-access-node';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import { buildTestImage, layoutObjects } from './__fixtures__/oci-image';
import type { RunningRegistry } from './registry.process';
import { startRegistry } from './registry.process';
import type { RegistryStore } from './registry.ports';

const HELLO = 'apps/demo/hello';

/** A bucket that a test can make disappear while the registry runs. */
interface VanishingBucket {
  objects: ObjectStore;
  registryStore: RegistryStore;
  remove: () => Promise<void>;
  cleanup: () => Promise<void>;
}

const buckets: Array<[string, () => Promise<VanishingBucket>]> = [
  [
    'local directory',
    async () => {
      const dir = await makeTempDir('podmin-registry-gone');
      return {
        objects: new LocalDirectoryObjectStore(dir.path),
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
    async () => {
      const { client, bucket } = await emulatorBucket('registry-gone', createS3Client);
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

describe.each(buckets)('registry when its %s bucket is gone', (kind, makeBucket) => {
  const hello = buildTestImage(`gone ${kind}`);
  let bucket: VanishingBucket;
  let registry: RunningRegistry;
  let base: string;

  beforeAll(async () => {
    bucket = await makeBucket();
    for (const [key, body] of layoutObjects(HELLO, 'v1', hello))
      await bucket.objects.put(key, body);
    registry = await startRegistry(
      { listen: { host: '127.0.0.1', port: 0 } },
      { store: bucket.registryStore, logger: new JsonLogger({ write: () => undefined }) },
    );
    base = `http://127.0.0.1:${registry.port}`;
  }, 180_000);

  afterAll(async () => {
    await registry?.app.close();
    await bucket?.cleanup();
  });

  it('answers 503 UNAVAILABLE with an OCI error body, not an internal error or NAME_UNKNOWN', async () => {
    await request(base).get(`/v2/${HELLO}/manifests/v1`).expect(200);
    await bucket.remove();
    const layer = hello.platforms[0]!.layer.digest;
    for (const path of [`/v2/${HELLO}/manifests/v1`, `/v2/${HELLO}/blobs/${layer}`]) {
      const res = await request(base).get(path);
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(res.text) as { errors: Array<{ code: string; message: string }> };
      expect(body.errors[0]?.code).toBe('UNAVAILABLE');
      expect(body.errors[0]?.message).toMatch(/bucket/i);
      expect(res.headers['retry-after']).toBe('5');
    }
  });
});
