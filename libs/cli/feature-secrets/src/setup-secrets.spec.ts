import { randomBytes } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import { InMemorySecretStore } from './__fakes__/fakes';
import { destroySetupSecrets, storeSetupSecrets } from './setup-secrets';

describe('storeSetupSecrets', () => {
  it('creates both system secrets once and keeps existing ones', async () => {
    const store = new InMemorySecretStore('aws-parameter-store');
    const key = randomBytes(32);
    const first = await storeSetupSecrets(store, 'demo', {
      workloadCaKey: key,
      clusterCa: '{"v":1}',
    });
    expect(first).toEqual({
      created: ['/demo/_system/workload-ca-key', '/demo/_system/cluster-ca'],
      kept: [],
    });
    const stored = store.values.get('/demo/_system/workload-ca-key')?.toString() ?? '';
    expect(stored).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(stored, 'base64').equals(key)).toBe(true);
    expect(store.values.get('/demo/_system/cluster-ca')?.toString()).toBe('{"v":1}');

    const second = await storeSetupSecrets(store, 'demo', {
      workloadCaKey: randomBytes(32),
      clusterCa: '{"v":2}',
    });
    expect(second).toEqual({
      created: [],
      kept: ['/demo/_system/workload-ca-key', '/demo/_system/cluster-ca'],
    });
    expect(store.values.get('/demo/_system/workload-ca-key')?.toString()).toBe(stored);
    expect(store.values.get('/demo/_system/cluster-ca')?.toString()).toBe('{"v":1}');
  });

  it('rejects a key of the wrong size and passes other failures on', async () => {
    const store = new InMemorySecretStore('aws-parameter-store');
    await expect(
      storeSetupSecrets(store, 'demo', { workloadCaKey: randomBytes(16), clusterCa: 'x' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    store.failure = new PodminError('ACCESS_DENIED', 'denied');
    await expect(
      storeSetupSecrets(store, 'demo', { workloadCaKey: randomBytes(32), clusterCa: 'x' }),
    ).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  });
});

describe('destroySetupSecrets', () => {
  it('deletes both system secrets and the trust list, and treats absent ones as done', async () => {
    const store = new InMemorySecretStore('aws-parameter-store');
    await storeSetupSecrets(store, 'demo', { workloadCaKey: randomBytes(32), clusterCa: '{}' });
    await store.create('/demo/_system/deployers', Buffer.from('{"version":1,"deployers":[]}'));
    await store.create('/demo/default/web/token', Buffer.from('x'));
    expect(await destroySetupSecrets(store, 'demo')).toEqual([
      '/demo/_system/workload-ca-key',
      '/demo/_system/cluster-ca',
      '/demo/_system/deployers',
    ]);
    expect(store.values.has('/demo/_system/deployers')).toBe(false);
    expect(store.values.has('/demo/_system/cluster-ca')).toBe(false);
    expect(store.values.has('/demo/default/web/token')).toBe(true);
    expect(await destroySetupSecrets(store, 'demo')).toEqual([]);
  });
});
