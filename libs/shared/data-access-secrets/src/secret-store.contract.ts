// The behaviour every SecretStore adapter must share, run by each adapter's integration spec
// against a real backend (moto for AWS, the filesystem for local). Not exported from index.ts:
// it needs jest's globals.
import { randomBytes } from 'node:crypto';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';
import type { SecretProviderName, SecretStore } from './secret-store.port';

/** A store under test, a store of the same backend with a small listing page, and cleanup. */
export interface SecretStoreFixture {
  store: SecretStore;
  /** The same backend listing two names a page, to prove list() follows every page. */
  smallPages: SecretStore;
  cleanup: () => Promise<void>;
}

/** First-call setup can install the emulator from the package registry. */
const SETUP_TIMEOUT_MS = 180_000;

/** Resolves to the PodminError code `promise` rejects with, or fails the test. */
export async function expectCode(promise: Promise<unknown>, code: PodminErrorCode): Promise<void> {
  const err: unknown = await promise.then(
    () => new Error(`expected ${code}, but the call succeeded`),
    (e: unknown) => e,
  );
  if (!(err instanceof PodminError)) throw err;
  expect(err.code).toBe(code);
}

/** A cluster name no other test uses, so tests can share one emulator. */
export function uniqueCluster(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** Registers the shared SecretStore contract tests for one adapter and provider. */
export function describeSecretStoreContract(
  label: string,
  provider: SecretProviderName,
  makeFixture: () => Promise<SecretStoreFixture>,
): void {
  describe(`SecretStore contract (${provider}): ${label}`, () => {
    let fixture: SecretStoreFixture | undefined;
    const ready = (): SecretStoreFixture => {
      if (fixture === undefined) throw new Error('fixture not ready');
      return fixture;
    };
    const store = (): SecretStore => ready().store;
    let cluster = '';
    const name = (key: string, pod = 'web', namespace = 'default'): string =>
      `/${cluster}/${namespace}/${pod}/${key}`;

    beforeAll(async () => {
      fixture = await makeFixture();
    }, SETUP_TIMEOUT_MS);
    beforeEach(() => {
      cluster = uniqueCluster();
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('serves its provider', () => {
      expect(store().provider).toBe(provider);
    });

    it('creates once, reads the exact bytes back, and keeps the original on a second create', async () => {
      await store().create(name('database-url'), Buffer.from('postgres://u:p@db/app'));
      expect((await store().get(name('database-url'))).toString()).toBe('postgres://u:p@db/app');
      await expectCode(
        store().create(name('database-url'), Buffer.from('other')),
        'ALREADY_EXISTS',
      );
      expect((await store().get(name('database-url'))).toString()).toBe('postgres://u:p@db/app');
    });

    it('keeps multi-byte UTF-8 and newlines intact', async () => {
      const value = Buffer.from('grüße\n🔑 line two\n', 'utf8');
      await store().create(name('text'), value);
      expect((await store().get(name('text'))).equals(value)).toBe(true);
    });

    it('updates only an existing secret', async () => {
      await expectCode(store().update(name('log-level'), Buffer.from('debug')), 'NOT_FOUND');
      await expectCode(store().get(name('log-level')), 'NOT_FOUND');
      await store().create(name('log-level'), Buffer.from('info'));
      await store().update(name('log-level'), Buffer.from('debug'));
      expect((await store().get(name('log-level'))).toString()).toBe('debug');
    });

    it('tells whether a secret exists without reading it, and validates the name', async () => {
      expect(await store().exists(name('tunnel-token'))).toBe(false);
      await store().create(name('tunnel-token'), Buffer.from('eyJ'));
      expect(await store().exists(name('tunnel-token'))).toBe(true);
      // An exact name, never a prefix or a sibling.
      expect(await store().exists(name('tunnel'))).toBe(false);
      expect(await store().exists(name('tunnel-token', 'other'))).toBe(false);
      await expectCode(store().exists(`/${cluster}/default/web/../x`), 'INVALID_ARGUMENT');
      await store().destroy(name('tunnel-token'));
      expect(await store().exists(name('tunnel-token'))).toBe(false);
    });

    it('reports missing secrets as NOT_FOUND', async () => {
      await expectCode(store().get(name('missing')), 'NOT_FOUND');
      await expectCode(store().destroy(name('missing')), 'NOT_FOUND');
    });

    it('rejects empty values and invalid names before storing anything', async () => {
      await expectCode(store().create(name('empty'), Buffer.alloc(0)), 'INVALID_ARGUMENT');
      for (const bad of [
        `/${cluster}/default/web/../x`,
        `/${cluster}/Default/web/k`,
        `/${cluster}/default/web/.hidden`,
        `/${cluster}/_system/web/k`,
        `${cluster}/default/web/k`,
        `/${cluster}/default/k`,
      ]) {
        await expectCode(store().create(bad, Buffer.from('v')), 'INVALID_ARGUMENT');
        await expectCode(store().get(bad), 'INVALID_ARGUMENT');
      }
      expect(await store().list(`/${cluster}/`)).toEqual([]);
    });

    it('stores system secrets under /<cluster>/_system/', async () => {
      const system = `/${cluster}/_system/otel-logs-headers`;
      await store().create(system, Buffer.from('{"authorization":"Bearer x"}'));
      expect((await store().get(system)).toString()).toBe('{"authorization":"Bearer x"}');
      expect(await store().list(`/${cluster}/_system/`)).toEqual([system]);
    });

    it('lists names under a prefix in sorted order, never a sibling prefix', async () => {
      const sibling = `/${cluster}x/default/web/a`;
      await store().create(name('b'), Buffer.from('1'));
      await store().create(name('a'), Buffer.from('2'));
      await store().create(name('c', 'api', 'product'), Buffer.from('3'));
      await store().create(sibling, Buffer.from('4'));
      try {
        expect(await store().list(`/${cluster}/`)).toEqual([
          name('a'),
          name('b'),
          name('c', 'api', 'product'),
        ]);
        expect(await store().list(`/${cluster}/default/`)).toEqual([name('a'), name('b')]);
        expect(await store().list(`/${cluster}/product/api/`)).toEqual([
          name('c', 'api', 'product'),
        ]);
        await expectCode(store().list(`/${cluster}`), 'INVALID_ARGUMENT');
      } finally {
        await store().destroy(sibling);
      }
    });

    it('follows every page of a listing', async () => {
      const names = Array.from({ length: 7 }, (_, i) => name(`key-${i}`));
      for (const n of names) await store().create(n, Buffer.from('v'));
      expect(await ready().smallPages.list(`/${cluster}/`)).toEqual([...names].sort());
    });

    it('destroys permanently, after which the name can be created again', async () => {
      await store().create(name('token'), Buffer.from('one'));
      await store().destroy(name('token'));
      await expectCode(store().get(name('token')), 'NOT_FOUND');
      expect(await store().list(`/${cluster}/`)).toEqual([]);
      await store().create(name('token'), Buffer.from('two'));
      expect((await store().get(name('token'))).toString()).toBe('two');
    });

    if (provider === 'aws-parameter-store') {
      it('accepts UTF-8 values up to 4 KiB and rejects larger or binary ones', async () => {
        const max = Buffer.from('é'.repeat(2048));
        expect(max.length).toBe(4096);
        await store().create(name('max'), max);
        expect((await store().get(name('max'))).equals(max)).toBe(true);
        await expectCode(store().create(name('big'), Buffer.alloc(4097, 'x')), 'INVALID_ARGUMENT');
        await expectCode(store().update(name('max'), Buffer.alloc(4097, 'x')), 'INVALID_ARGUMENT');
        await expectCode(
          store().create(name('binary'), Buffer.from([0xff, 0xfe, 0x00])),
          'INVALID_ARGUMENT',
        );
        expect(await store().list(`/${cluster}/`)).toEqual([name('max')]);
      });

      it('rejects delete and restore, leaving the value in place', async () => {
        await store().create(name('keep'), Buffer.from('v'));
        await expectCode(store().delete(name('keep')), 'INVALID_ARGUMENT');
        await expectCode(store().restore(name('keep')), 'INVALID_ARGUMENT');
        expect((await store().get(name('keep'))).toString()).toBe('v');
      });
    }

    if (provider === 'aws-secrets-manager') {
      it('stores binary values exactly and accepts up to 64 KiB', async () => {
        const binary = Buffer.from([0xff, 0x00, 0x01, 0x80, 0xfe]);
        await store().create(name('binary'), binary);
        expect((await store().get(name('binary'))).equals(binary)).toBe(true);
        const max = randomBytes(64 * 1024);
        await store().create(name('max'), max);
        expect((await store().get(name('max'))).equals(max)).toBe(true);
        await expectCode(
          store().create(name('big'), Buffer.alloc(64 * 1024 + 1, 'x')),
          'INVALID_ARGUMENT',
        );
        await store().update(name('binary'), Buffer.from('now text'));
        expect((await store().get(name('binary'))).toString()).toBe('now text');
      });

      it('schedules deletion, hides the secret, refuses to use it, and restores it', async () => {
        await store().create(name('oauth-token'), Buffer.from('tok'));
        await store().delete(name('oauth-token'));
        await expectCode(store().get(name('oauth-token')), 'PRECONDITION_FAILED');
        await expectCode(
          store().update(name('oauth-token'), Buffer.from('x')),
          'PRECONDITION_FAILED',
        );
        await expectCode(
          store().create(name('oauth-token'), Buffer.from('x')),
          'PRECONDITION_FAILED',
        );
        await expectCode(store().delete(name('oauth-token')), 'PRECONDITION_FAILED');
        await expectCode(store().exists(name('oauth-token')), 'PRECONDITION_FAILED');
        expect(await store().list(`/${cluster}/`)).toEqual([]);
        await store().restore(name('oauth-token'));
        expect((await store().get(name('oauth-token'))).toString()).toBe('tok');
        expect(await store().list(`/${cluster}/`)).toEqual([name('oauth-token')]);
      });

      it('destroys a secret that is scheduled for deletion', async () => {
        await store().create(name('gone'), Buffer.from('v'));
        await store().delete(name('gone'));
        await store().destroy(name('gone'));
        await expectCode(store().restore(name('gone')), 'NOT_FOUND');
        await expectCode(store().delete(name('gone')), 'NOT_FOUND');
      });
    }
  });
}
