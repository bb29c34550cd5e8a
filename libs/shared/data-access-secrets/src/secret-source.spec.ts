import { PodminError } from '@podmin/util-errors';
import { secretSourceFor } from './secret-source';

describe('secretSourceFor', () => {
  const stores = {
    'aws-parameter-store': {
      get: (name: string) => Promise.resolve(Buffer.from(`ps:${name}`)),
    },
  };

  it('reads a Pod secret from the store of the named provider', async () => {
    const source = secretSourceFor(stores);
    expect((await source.fetch('aws-parameter-store', '/demo/default/web/k')).toString()).toBe(
      'ps:/demo/default/web/k',
    );
  });

  it('refuses an unconfigured provider, system names and invalid names', async () => {
    const source = secretSourceFor(stores);
    await expect(source.fetch('aws-secrets-manager', '/demo/default/web/k')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      source.fetch('aws-parameter-store', '/demo/_system/workload-ca-key'),
    ).rejects.toBeInstanceOf(PodminError);
    await expect(
      source.fetch('aws-parameter-store', '/demo/default/web/../x'),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
