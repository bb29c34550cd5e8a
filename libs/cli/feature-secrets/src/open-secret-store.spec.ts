import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoContext } from './__fakes__/fakes';
import {
  awsSecretStoreOpener,
  localSecretStoreOpener,
  localSecretsFile,
} from './open-secret-store';

describe('localSecretStoreOpener / awsSecretStoreOpener', () => {
  // The SDK warns about the Node.js version when a client is built; keep test output clean.
  beforeAll(() => {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  });

  it('opens the local file store for both provider names of a local context', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-open-secrets-'));
    try {
      const open = localSecretStoreOpener(demoContext(), dir);
      const ps = await open('aws-parameter-store');
      const sm = await open('aws-secrets-manager');
      expect([ps.constructor.name, sm.constructor.name]).toEqual([
        'LocalSecretStore',
        'LocalSecretStore',
      ]);
      await sm.create('/demo/default/web/k', Buffer.from([0xff]));
      expect(fs.statSync(localSecretsFile(dir, 'demo')).mode & 0o777).toBe(0o600);
      expect(localSecretsFile(dir, 'demo')).toBe(path.join(dir, 'secrets', 'demo.json'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens the AWS adapters for an aws context without contacting AWS', async () => {
    const open = awsSecretStoreOpener(
      demoContext({ provider: 'aws', region: 'eu-west-1', bucket: 'b' }),
      { ssmEndpoint: 'http://127.0.0.1:1', secretsManagerEndpoint: 'http://127.0.0.1:1' },
    );
    expect((await open('aws-parameter-store')).constructor.name).toBe('ParameterStoreSecretStore');
    expect((await open('aws-secrets-manager')).constructor.name).toBe('SecretsManagerSecretStore');
  });
});
