import fs from 'node:fs';
import { makeTempDir } from '@podmin/testing';
import { LocalSecretStore } from './local-secret-store';
import { describeSecretStoreContract } from './secret-store.contract';
import { SECRET_PROVIDERS } from './secret-store.port';

for (const provider of SECRET_PROVIDERS) {
  describeSecretStoreContract('local file store', provider, async () => {
    const dir = await makeTempDir('podmin-secrets-contract');
    const file = `${dir.path}/secrets/demo.json`;
    return {
      store: new LocalSecretStore({ file, provider }),
      smallPages: new LocalSecretStore({ file, provider }),
      cleanup: dir.cleanup,
    };
  });
}

describe('LocalSecretStore file', () => {
  it('is mode 0600 in a 0700 directory', async () => {
    const dir = await makeTempDir('podmin-secrets-mode');
    try {
      const file = `${dir.path}/secrets/demo.json`;
      await new LocalSecretStore({ file, provider: 'aws-parameter-store' }).create(
        '/demo/default/web/k',
        Buffer.from('v'),
      );
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(`${dir.path}/secrets`).mode & 0o777).toBe(0o700);
    } finally {
      await dir.cleanup();
    }
  });
});
