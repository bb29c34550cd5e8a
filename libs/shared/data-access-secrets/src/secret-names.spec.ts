import { hasCode } from '@podmin/util-errors';
import {
  assertSecretPrefix,
  isSafeSecretKey,
  parseSecretName,
  systemSecretName,
  workloadSecretName,
} from './secret-names';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return hasCode(err, 'INVALID_ARGUMENT') ? 'INVALID_ARGUMENT' : String(err);
  }
}

describe('secret names', () => {
  it('builds and parses workload and system names', () => {
    const name = workloadSecretName({
      cluster: 'demo',
      namespace: 'product',
      pod: 'web',
      key: 'database-url',
    });
    expect(name).toBe('/demo/product/web/database-url');
    expect(parseSecretName(name)).toEqual({
      kind: 'workload',
      cluster: 'demo',
      namespace: 'product',
      pod: 'web',
      key: 'database-url',
    });
    expect(systemSecretName('demo', 'otel-logs-headers')).toBe('/demo/_system/otel-logs-headers');
    expect(parseSecretName('/demo/_system/workload-ca-key')).toEqual({
      kind: 'system',
      cluster: 'demo',
      key: 'workload-ca-key',
    });
  });

  it.each([
    ['relative', 'demo/default/web/k'],
    ['too few parts', '/demo/default/k'],
    ['too many parts', '/demo/default/web/k/extra'],
    ['uppercase namespace', '/demo/Default/web/k'],
    ['_system as a namespace', '/demo/_system/web/k'],
    ['dot-dot key', '/demo/default/web/..'],
    ['hidden key', '/demo/default/web/.env'],
    ['empty key', '/demo/default/web/'],
    ['key with a space', '/demo/default/web/a b'],
    ['bad cluster', '/Demo/default/web/k'],
    ['bad system key', '/demo/_system/../x'],
  ])('rejects a name with %s', (_label, name) => {
    expect(codeOf(() => parseSecretName(name))).toBe('INVALID_ARGUMENT');
  });

  it('lists every bad component when building a name', () => {
    try {
      workloadSecretName({ cluster: 'A', namespace: '_system', pod: 'web', key: '../x' });
      throw new Error('expected a failure');
    } catch (err) {
      expect(hasCode(err, 'INVALID_ARGUMENT')).toBe(true);
      const message = (err as Error).message;
      expect(message).toContain('cluster');
      expect(message).toContain('namespace');
      expect(message).toContain('key');
      expect(message).not.toContain('pod:');
    }
  });

  it('accepts safe keys only', () => {
    expect(isSafeSecretKey('tls.crt')).toBe(true);
    expect(isSafeSecretKey('A_b-1')).toBe(true);
    expect(isSafeSecretKey('-x')).toBe(false);
    expect(isSafeSecretKey('a/b')).toBe(false);
    expect(isSafeSecretKey('k'.repeat(254))).toBe(false);
  });

  it('validates listing prefixes', () => {
    for (const ok of ['/', '/demo/', '/demo/default/', '/demo/default/web/', '/demo/_system/']) {
      expect(codeOf(() => assertSecretPrefix(ok))).toBeUndefined();
    }
    for (const bad of ['', '/demo', 'demo/', '/demo//', '/demo/_system/x/', '/d/n/p/k/']) {
      expect(codeOf(() => assertSecretPrefix(bad))).toBe('INVALID_ARGUMENT');
    }
  });
});
