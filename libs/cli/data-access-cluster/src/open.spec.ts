import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBucketProvisioner, openObjectStore } from './open';

describe('openObjectStore', () => {
  it('opens a local context as a directory with object semantics', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-open-'));
    try {
      const location = {
        provider: 'local' as const,
        region: 'local',
        bucket: path.join(dir, 'bucket'),
      };
      await (await openBucketProvisioner(location, {})).ensureBucket();
      const store = await openObjectStore(location, {});
      await store.putIfAbsent('deployments/index.json', '{}\n');
      expect(fs.readFileSync(path.join(dir, 'bucket', 'deployments', 'index.json'), 'utf8')).toBe(
        '{}\n',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens an aws context as S3 without contacting it', async () => {
    const store = await openObjectStore(
      { provider: 'aws', region: 'eu-west-1', bucket: 'podmin-x' },
      { s3Endpoint: 'http://127.0.0.1:1' },
    );
    expect(store.constructor.name).toBe('S3ObjectStore');
  });
});
