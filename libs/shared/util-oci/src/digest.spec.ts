import {
  computeDigest,
  createDigester,
  isDigest,
  matchesDigest,
  parseDigest,
  sha256Digest,
  sha512Digest,
} from './digest';

const EMPTY_SHA256 = 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('digests', () => {
  it('computes sha256 and sha512 of bytes', () => {
    expect(sha256Digest('')).toBe(EMPTY_SHA256);
    expect(sha512Digest('abc')).toMatch(/^sha512:ddaf35a1[0-9a-f]{120}$/);
    expect(computeDigest(Buffer.from('abc'), 'sha512')).toBe(sha512Digest('abc'));
  });

  it('validates algorithm, case and length', () => {
    expect(isDigest(EMPTY_SHA256)).toBe(true);
    expect(isDigest(EMPTY_SHA256.toUpperCase())).toBe(false);
    expect(isDigest('sha256:abc')).toBe(false);
    expect(isDigest(`md5:${'0'.repeat(32)}`)).toBe(false);
    expect(isDigest(`sha512:${'0'.repeat(64)}`)).toBe(false);
    expect(isDigest(42)).toBe(false);
    expect(parseDigest(EMPTY_SHA256)).toEqual({ algorithm: 'sha256', hex: EMPTY_SHA256.slice(7) });
    expect(() => parseDigest('sha256:../../etc')).toThrow(/must be sha256/);
  });

  it('streams a digest equal to the one-shot digest', () => {
    const digester = createDigester('sha256');
    digester.update(Buffer.from('hello '));
    digester.update(Buffer.from('world'));
    expect(digester.digest()).toBe(sha256Digest('hello world'));
    expect(matchesDigest('hello world', sha256Digest('hello world'))).toBe(true);
    expect(matchesDigest('hello', sha256Digest('hello world'))).toBe(false);
  });
});
