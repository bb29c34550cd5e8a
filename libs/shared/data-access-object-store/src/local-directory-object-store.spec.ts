import { assertLocalKey, compareKeys } from './local-directory-object-store';

describe('assertLocalKey', () => {
  it('accepts ordinary keys, including the probe prefix', () => {
    expect(() => assertLocalKey('deployments/index.json')).not.toThrow();
    expect(() => assertLocalKey('.podmin-probe/abc')).not.toThrow();
    expect(() => assertLocalKey('a/.podmin-locks/b')).not.toThrow();
  });

  it.each([
    '.podmin-tmp-x',
    'a/.podmin-tmp-',
    'a/.podmin-tmp-1/b',
    '.podmin-locks',
    '.podmin-locks/x',
    'a/../b',
  ])('rejects %j with INVALID_ARGUMENT', (key) => {
    expect(() => assertLocalKey(key)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error,
    );
  });
});

describe('compareKeys', () => {
  it('orders by UTF-8 bytes as S3 does, not by UTF-16 code units', () => {
    // U+FF5E (3 UTF-8 bytes, 0xEF...) sorts before U+1F600 (4 bytes, 0xF0...) in S3,
    // but after it in JavaScript's default string order (0xFF5E > 0xD83D).
    const keys = ['\u{1F600}', '\uFF5E', 'a/b', 'a-c', 'B', 'a'];
    expect([...keys].sort(compareKeys)).toEqual(['B', 'a', 'a-c', 'a/b', '\uFF5E', '\u{1F600}']);
    expect([...keys].sort()).not.toEqual([...keys].sort(compareKeys));
  });
});
