import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { getAwsEmulator } from '@podmin/testing';
import { createSecretsManagerClient, createSsmClient } from './aws-clients';
import { ParameterStoreSecretStore } from './parameter-store-secret-store';
import { describeSecretStoreContract, expectCode, uniqueCluster } from './secret-store.contract';
import { SecretsManagerSecretStore } from './secrets-manager-secret-store';

async function emulatorOptions() {
  const emulator = await getAwsEmulator();
  return {
    region: emulator.region,
    endpoint: emulator.endpoint,
    credentials: emulator.credentials,
  };
}

describeSecretStoreContract('SSM on the moto emulator', 'aws-parameter-store', async () => {
  const client = createSsmClient(await emulatorOptions());
  return {
    store: new ParameterStoreSecretStore(client),
    smallPages: new ParameterStoreSecretStore(client, { pageSize: 2 }),
    cleanup: () => Promise.resolve(client.destroy()),
  };
});

describeSecretStoreContract(
  'Secrets Manager on the moto emulator',
  'aws-secrets-manager',
  async () => {
    const client = createSecretsManagerClient(await emulatorOptions());
    return {
      store: new SecretsManagerSecretStore(client),
      smallPages: new SecretsManagerSecretStore(client, { pageSize: 2 }),
      cleanup: () => Promise.resolve(client.destroy()),
    };
  },
);

describe('ParameterStoreSecretStore on the moto emulator', () => {
  it('writes SecureString and reads String, StringList and SecureString parameters', async () => {
    const client = createSsmClient(await emulatorOptions());
    try {
      const store = new ParameterStoreSecretStore(client);
      const prefix = `/${uniqueCluster()}/default/web/`;
      await store.create(`${prefix}secure`, Buffer.from('s3cret'));
      await client.send(
        new PutParameterCommand({ Name: `${prefix}plain`, Value: 'info', Type: 'String' }),
      );
      await client.send(
        new PutParameterCommand({ Name: `${prefix}list`, Value: 'a,b,c', Type: 'StringList' }),
      );
      expect((await store.get(`${prefix}secure`)).toString()).toBe('s3cret');
      expect((await store.get(`${prefix}plain`)).toString()).toBe('info');
      expect((await store.get(`${prefix}list`)).toString()).toBe('a,b,c');
      const { GetParameterCommand } = await import('@aws-sdk/client-ssm');
      const raw = await client.send(new GetParameterCommand({ Name: `${prefix}secure` }));
      expect(raw.Parameter?.Type).toBe('SecureString');
      await store.update(`${prefix}plain`, Buffer.from('debug'));
      const updated = await client.send(new GetParameterCommand({ Name: `${prefix}plain` }));
      expect(updated.Parameter?.Type).toBe('SecureString');
    } finally {
      client.destroy();
    }
  }, 180_000);

  it('reports an unreachable endpoint as IO_ERROR', async () => {
    const client = createSsmClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    try {
      await expectCode(new ParameterStoreSecretStore(client).get('/c/default/web/k'), 'IO_ERROR');
    } finally {
      client.destroy();
    }
  }, 60_000);
});
