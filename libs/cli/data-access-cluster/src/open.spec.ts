import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { directoryBucketAccess, s3BucketAccess } from './open';

describe('openObjectStore', () => {
  it('opens a local context as a directory with object semantics', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-open-'));
    try {
      const location = {
        provider: 'local' as const,
        region: 'local',
        bucket: path.join(dir, 'bucket'),
      };
      await (await directoryBucketAccess.openBucketProvisioner(location)).ensureBucket();
      const store = await directoryBucketAccess.openObjectStore(location);
      await store.putIfAbsent('deployments/index.json', '{}\n');
      expect(fs.readFileSync(path.join(dir, 'bucket', 'deployments', 'index.json'), 'utf8')).toBe(
        '{}\n',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens an aws context as S3 without contacting it', async () => {
    const store = await s3BucketAccess({ s3Endpoint: 'http://127.0.0.1:1' }).openObjectStore({
      region: 'eu-west-1',
      bucket: 'podmin-x',
    });
    expect(store.constructor.name).toBe('S3ObjectStore');
  });
});
