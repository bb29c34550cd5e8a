import { isDnsLabel, isDnsSubdomain } from './dns-label';

describe('isDnsLabel', () => {
  it('accepts lowercase letters, digits and inner "-", at most 63 characters by default', () => {
    expect(['a', '0', 'web-1', 'a'.repeat(63)].map((v) => isDnsLabel(v))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('refuses empty, uppercase, dots, "-" at either end and names over the limit', () => {
    expect(['', 'Web', 'a.b', '-a', 'a-', 'a_b', 'a'.repeat(64)].map((v) => isDnsLabel(v))).toEqual(
      [false, false, false, false, false, false, false],
    );
  });

  it('takes a shorter limit (a cluster name: 40) or none at all', () => {
    expect(isDnsLabel('a'.repeat(41), 40)).toBe(false);
    expect(isDnsLabel('a'.repeat(40), 40)).toBe(true);
    expect(isDnsLabel('a'.repeat(300), Infinity)).toBe(true);
    expect(isDnsLabel('A', Infinity)).toBe(false);
  });
});

describe('isDnsSubdomain', () => {
  it('accepts dot-separated labels up to 253 characters, each label any length (Kubernetes)', () => {
    expect(isDnsSubdomain('node-1.eu.example')).toBe(true);
    expect(isDnsSubdomain('a'.repeat(100))).toBe(true);
    expect(isDnsSubdomain('a'.repeat(254))).toBe(false);
    expect(isDnsSubdomain('a..b')).toBe(false);
    expect(isDnsSubdomain('')).toBe(false);
  });

  it('limits each label when asked (certificate names: 63)', () => {
    expect(isDnsSubdomain(`${'a'.repeat(64)}.b`, 63)).toBe(false);
    expect(isDnsSubdomain(`${'a'.repeat(63)}.b`, 63)).toBe(true);
  });
});
