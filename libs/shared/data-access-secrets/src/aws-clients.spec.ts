import { createSecretsManagerClient, createSsmClient } from './aws-clients';

describe('createSsmClient / createSecretsManagerClient', () => {
  it.each([
    ['SSM', createSsmClient],
    ['Secrets Manager', createSecretsManagerClient],
  ])('%s: dual-stack when asked, unless a custom endpoint is set', async (_name, create) => {
    const dual = create({ region: 'eu-west-1', dualStack: true });
    const plain = create({ region: 'eu-west-1' });
    const custom = create({
      region: 'eu-west-1',
      dualStack: true,
      endpoint: 'http://127.0.0.1:4566',
    });
    try {
      expect(await dual.config.useDualstackEndpoint()).toBe(true);
      expect(await plain.config.useDualstackEndpoint()).toBe(false);
      expect(await custom.config.useDualstackEndpoint()).toBe(false);
      expect(await custom.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    } finally {
      dual.destroy();
      plain.destroy();
      custom.destroy();
    }
  });
});
