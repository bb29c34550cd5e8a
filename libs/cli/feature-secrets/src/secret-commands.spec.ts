import type { SecretProviderName } from '@podmin/data-access-secrets';
import { RecordingReporter } from '@podmin/cli-util-io';
import { PodminError } from '@podmin/util-errors';
import { FakeValueInput, InMemorySecretStore, demoContext } from './__fakes__/fakes';
import {
  createSecret,
  deleteSecret,
  destroySecret,
  listSecrets,
  restoreSecret,
  updateSecret,
} from './secret-commands';
import type { SecretsDeps } from './secrets.ports';

const SECRET = 'p4ssw0rd-never-printed';

function setup(interactive = false, typed?: string) {
  const stores = {
    'aws-parameter-store': new InMemorySecretStore('aws-parameter-store'),
    'aws-secrets-manager': new InMemorySecretStore('aws-secrets-manager'),
  };
  const reporter = new RecordingReporter();
  const input = new FakeValueInput(interactive, {
    stdin: SECRET,
    files: { 'headers.json': '{"authorization":"Bearer x"}', 'bad.json': '[1]' },
    ...(typed === undefined ? {} : { typed }),
  });
  const deps: SecretsDeps = {
    reporter,
    context: demoContext(),
    openStore: (p: SecretProviderName) => Promise.resolve(stores[p]),
    input,
  };
  const everything = () =>
    [...reporter.infos, ...reporter.warnings, ...reporter.results].join('\n');
  return { stores, reporter, input, deps, everything };
}

describe('secret commands', () => {
  it('creates and updates without ever printing the value', async () => {
    const { stores, deps, everything } = setup();
    await createSecret({ key: 'database-url', pod: 'web', fromStdin: true }, deps);
    expect(
      stores['aws-parameter-store'].values.get('/demo/default/web/database-url')?.toString(),
    ).toBe(SECRET);
    await updateSecret({ key: 'database-url', pod: 'web', fromStdin: true }, deps);
    await expect(
      createSecret({ key: 'database-url', pod: 'web', fromStdin: true }, deps),
    ).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(everything()).toContain('Created database-url for pod web in namespace default');
    expect(everything()).not.toContain(SECRET);
  });

  it('prompts on a terminal and refuses without one', async () => {
    const tty = setup(true, 'typed-value');
    await createSecret({ key: 'k', pod: 'web' }, tty.deps);
    expect(tty.stores['aws-parameter-store'].values.get('/demo/default/web/k')?.toString()).toBe(
      'typed-value',
    );
    const pipe = setup(false);
    await expect(createSecret({ key: 'k', pod: 'web' }, pipe.deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('validates otel-logs-headers and refuses internal system keys', async () => {
    const { stores, deps } = setup();
    await createSecret({ key: 'otel-logs-headers', system: true, fromFile: 'headers.json' }, deps);
    expect(stores['aws-parameter-store'].values.has('/demo/_system/otel-logs-headers')).toBe(true);
    await expect(
      updateSecret({ key: 'otel-logs-headers', system: true, fromFile: 'bad.json' }, deps),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    for (const key of ['workload-ca-key', 'cluster-ca', 'other']) {
      await expect(
        createSecret({ key, system: true, fromStdin: true }, deps),
      ).rejects.toBeInstanceOf(PodminError);
      await expect(destroySecret({ key, system: true, yes: true }, deps)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
  });

  it('lists names by namespace, Pod and provider and hides internal system keys', async () => {
    const { stores, deps, reporter } = setup();
    const ps = stores['aws-parameter-store'];
    const sm = stores['aws-secrets-manager'];
    await ps.create('/demo/default/web/b', Buffer.from('1'));
    await sm.create('/demo/default/web/a', Buffer.from('2'));
    await ps.create('/demo/product/api/c', Buffer.from('3'));
    await ps.create('/demo/_system/workload-ca-key', Buffer.from('k'));
    await ps.create('/demo/_system/cluster-ca', Buffer.from('k'));
    await ps.create('/demo/_system/otel-logs-headers', Buffer.from('{"a":"b"}'));
    await sm.create('/other/default/web/x', Buffer.from('4'));

    expect(await listSecrets({}, deps)).toEqual([
      { namespace: 'default', pod: 'web', key: 'a', provider: 'aws-secrets-manager' },
      { namespace: 'default', pod: 'web', key: 'b', provider: 'aws-parameter-store' },
    ]);
    const all = await listSecrets({ allNamespaces: true }, deps);
    expect(all.map((r) => `${r.namespace}/${r.pod}/${r.key}`)).toEqual([
      'default/web/a',
      'default/web/b',
      'product/api/c',
    ]);
    expect(await listSecrets({ namespace: 'product', pod: 'api' }, deps)).toHaveLength(1);
    expect(await listSecrets({ provider: 'aws-secrets-manager' }, deps)).toHaveLength(1);
    expect(await listSecrets({ system: true }, deps)).toEqual([
      { namespace: '-', pod: '-', key: 'otel-logs-headers', provider: 'aws-parameter-store' },
    ]);
    expect(reporter.warnings).toEqual([]);
    await expect(listSecrets({ system: true, pod: 'web' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(listSecrets({ allNamespaces: true, namespace: 'x' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('warns about one failing provider and still lists the other', async () => {
    const { stores, deps, reporter } = setup();
    await stores['aws-parameter-store'].create('/demo/default/web/b', Buffer.from('1'));
    stores['aws-secrets-manager'].failure = new PodminError('ACCESS_DENIED', 'listing: denied');
    expect(await listSecrets({}, deps)).toHaveLength(1);
    expect(reporter.warnings).toEqual(['listing aws-secrets-manager: listing: denied']);
    stores['aws-parameter-store'].failure = new PodminError('ACCESS_DENIED', 'denied too');
    await expect(listSecrets({}, deps)).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  });

  it('deletes and restores per provider rules', async () => {
    const { stores, deps, reporter } = setup();
    await createSecret(
      { key: 't', pod: 'web', provider: 'aws-secrets-manager', fromStdin: true },
      deps,
    );
    await deleteSecret({ key: 't', pod: 'web', provider: 'aws-secrets-manager' }, deps);
    expect(stores['aws-secrets-manager'].deleted.has('/demo/default/web/t')).toBe(true);
    expect(reporter.infos.at(-1)).toContain('30 days');
    await restoreSecret({ key: 't', pod: 'web', provider: 'aws-secrets-manager' }, deps);
    expect(stores['aws-secrets-manager'].deleted.size).toBe(0);
    await createSecret({ key: 'p', pod: 'web', fromStdin: true }, deps);
    await expect(deleteSecret({ key: 'p', pod: 'web' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      hint: expect.stringContaining('destroy'),
    });
    await expect(restoreSecret({ key: 'p', pod: 'web' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('destroys only with -y or a confirmation', async () => {
    const pipe = setup(false);
    await createSecret({ key: 'p', pod: 'web', fromStdin: true }, pipe.deps);
    await expect(destroySecret({ key: 'p', pod: 'web' }, pipe.deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      hint: expect.stringContaining('-y'),
    });
    expect(pipe.stores['aws-parameter-store'].values.size).toBe(1);
    await destroySecret({ key: 'p', pod: 'web', yes: true }, pipe.deps);
    expect(pipe.stores['aws-parameter-store'].values.size).toBe(0);

    const tty = setup(true);
    await createSecret({ key: 'p', pod: 'web', fromStdin: true }, tty.deps);
    tty.reporter.answer = false;
    await expect(destroySecret({ key: 'p', pod: 'web' }, tty.deps)).rejects.toThrow(
      /not confirmed/,
    );
    expect(tty.stores['aws-parameter-store'].values.size).toBe(1);
    tty.reporter.answer = true;
    await destroySecret({ key: 'p', pod: 'web' }, tty.deps);
    expect(tty.stores['aws-parameter-store'].values.size).toBe(0);
  });
});
