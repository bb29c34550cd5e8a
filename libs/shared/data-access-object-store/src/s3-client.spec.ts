import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expectDualStackUnlessEndpoint } from '@podmin/testing';
import { createS3Client } from './s3-client';

describe('createS3Client', () => {
  const saved = { ...process.env };
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'podmin-s3-client-'));
    await writeFile(
      path.join(dir, 'credentials'),
      '[default]\naws_access_key_id=AKIADEFAULT\naws_secret_access_key=d\n[ops]\naws_access_key_id=AKIAOPS\naws_secret_access_key=o\n',
    );
    process.env['AWS_SHARED_CREDENTIALS_FILE'] = path.join(dir, 'credentials');
    process.env['AWS_CONFIG_FILE'] = path.join(dir, 'config-absent');
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
    for (const name of [
      'AWS_PROFILE',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
    ]) {
      delete process.env[name];
    }
  });

  afterAll(async () => {
    process.env = saved;
    await rm(dir, { recursive: true, force: true });
  });

  it('uses path-style addressing with a custom endpoint only', async () => {
    const custom = createS3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:4566' });
    const aws = createS3Client({ region: 'eu-west-1' });
    try {
      expect(custom.config.forcePathStyle).toBe(true);
      expect(await custom.config.endpoint?.()).toMatchObject({
        hostname: '127.0.0.1',
        port: 4566,
        protocol: 'http:',
      });
      expect(aws.config.forcePathStyle).toBe(false);
      expect(await aws.config.region()).toBe('eu-west-1');
    } finally {
      custom.destroy();
      aws.destroy();
    }
  });

  it('does not ask S3 for stored checksums on reads, and still sends them on writes', async () => {
    const client = createS3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:4566' });
    try {
      expect(await client.config.responseChecksumValidation()).toBe('WHEN_REQUIRED');
      expect(await client.config.requestChecksumCalculation()).toBe('WHEN_SUPPORTED');
    } finally {
      client.destroy();
    }
  });

  it('uses the dual-stack endpoint when asked, unless a custom endpoint is set', () =>
    expectDualStackUnlessEndpoint(createS3Client));

  it('reads credentials of the named profile, or the default one, from the shared files', async () => {
    const ops = createS3Client({ region: 'us-east-1', profile: 'ops' });
    const plain = createS3Client({ region: 'us-east-1' });
    try {
      expect((await ops.config.credentials()).accessKeyId).toBe('AKIAOPS');
      expect((await plain.config.credentials()).accessKeyId).toBe('AKIADEFAULT');
    } finally {
      ops.destroy();
      plain.destroy();
    }
  });
});
