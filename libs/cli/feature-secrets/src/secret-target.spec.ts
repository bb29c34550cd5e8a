import { demoContext } from './__fakes__/fakes';
import { defaultSecretProvider, resolveSecretTarget } from './secret-target';

describe('resolveSecretTarget', () => {
  it('addresses /<cluster>/<namespace>/<pod>/<key> with namespace default', () => {
    expect(resolveSecretTarget({ key: 'database-url', pod: 'web' }, demoContext())).toEqual({
      name: '/demo/default/web/database-url',
      provider: 'aws-parameter-store',
      label: 'database-url for pod web in namespace default',
      system: false,
    });
    expect(
      resolveSecretTarget(
        { key: 'k', pod: 'api', namespace: 'product', provider: 'aws-secrets-manager' },
        demoContext(),
      ),
    ).toMatchObject({ name: '/demo/product/api/k', provider: 'aws-secrets-manager' });
  });

  it("uses the context's default provider, and Parameter Store for a local default", () => {
    expect(defaultSecretProvider(demoContext({ secretsProvider: 'aws-secrets-manager' }))).toBe(
      'aws-secrets-manager',
    );
    expect(defaultSecretProvider(demoContext({ secretsProvider: 'local' }))).toBe(
      'aws-parameter-store',
    );
  });

  it('requires --for and validates every component', () => {
    expect(() => resolveSecretTarget({ key: 'k' }, demoContext())).toThrow('--for POD is required');
    expect(() => resolveSecretTarget({ key: '../k', pod: 'web' }, demoContext())).toThrow(/key/);
    expect(() =>
      resolveSecretTarget({ key: 'k', pod: 'web', namespace: '_system' }, demoContext()),
    ).toThrow(/namespace/);
    expect(() =>
      resolveSecretTarget({ key: 'k', pod: 'web', provider: 'local' }, demoContext()),
    ).toThrow(/--provider/);
  });

  it('accepts only the allowlisted system key', () => {
    expect(resolveSecretTarget({ key: 'otel-logs-headers', system: true }, demoContext())).toEqual({
      name: '/demo/_system/otel-logs-headers',
      provider: 'aws-parameter-store',
      label: 'system secret otel-logs-headers',
      system: true,
    });
    expect(() =>
      resolveSecretTarget({ key: 'workload-ca-key', system: true }, demoContext()),
    ).toThrow(/internal system secret/);
    expect(() => resolveSecretTarget({ key: 'cluster-ca', system: true }, demoContext())).toThrow(
      /internal system secret/,
    );
    expect(() => resolveSecretTarget({ key: 'deployers', system: true }, demoContext())).toThrow(
      /internal system secret managed by podmin trust/,
    );
    expect(() => resolveSecretTarget({ key: 'anything', system: true }, demoContext())).toThrow(
      /not a user-manageable system key/,
    );
  });

  it('keeps system secrets in the default provider and off Pod paths', () => {
    expect(() =>
      resolveSecretTarget(
        { key: 'otel-logs-headers', system: true, provider: 'aws-secrets-manager' },
        demoContext(),
      ),
    ).toThrow(/default secrets provider/);
    expect(
      resolveSecretTarget(
        { key: 'otel-logs-headers', system: true, provider: 'aws-parameter-store' },
        demoContext(),
      ).provider,
    ).toBe('aws-parameter-store');
    expect(() =>
      resolveSecretTarget({ key: 'otel-logs-headers', system: true, pod: 'web' }, demoContext()),
    ).toThrow(/cannot be combined/);
  });
});
