import { uniqueBucketName } from './bucket-name';

const VALID_BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

describe('uniqueBucketName', () => {
  it('keeps a clean prefix and yields valid, distinct names', () => {
    const a = uniqueBucketName('object-store');
    const b = uniqueBucketName('object-store');
    expect(a).toMatch(/^object-store-/);
    expect(a).toMatch(VALID_BUCKET);
    expect(a).not.toBe(b);
  });

  it('sanitises and truncates awkward prefixes', () => {
    for (const prefix of ['', '--Upper_Case.dots--', 'x'.repeat(100), '---', 'a/b c']) {
      const name = uniqueBucketName(prefix);
      expect(name).toMatch(VALID_BUCKET);
      expect(name).not.toContain('--');
    }
    expect(uniqueBucketName('Upper_Case')).toMatch(/^upper-case-/);
  });
});
