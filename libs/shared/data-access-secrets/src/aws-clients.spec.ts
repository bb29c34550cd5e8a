import { expectDualStackUnlessEndpoint } from '@podmin/testing';
import { createSecretsManagerClient, createSsmClient } from './aws-clients';

describe('createSsmClient / createSecretsManagerClient', () => {
  it.each([
    ['SSM', createSsmClient],
    ['Secrets Manager', createSecretsManagerClient],
  ])('%s: dual-stack when asked, unless a custom endpoint is set', (_name, create) =>
    expectDualStackUnlessEndpoint(create),
  );
});
