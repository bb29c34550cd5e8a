import { isDns1123Label, isLabelValue, isQualifiedName } from './names';

describe('names', () => {
  it('isDns1123Label', () => {
    for (const ok of ['a', 'web-1', '0', 'a'.repeat(63)]) {
      expect(isDns1123Label(ok)).toBe(true);
    }
    for (const bad of ['', 'A', '-a', 'a-', 'a_b', 'a.b', 'a'.repeat(64), '_system']) {
      expect(isDns1123Label(bad)).toBe(false);
    }
  });

  it('isQualifiedName', () => {
    for (const ok of ['app', 'app.kubernetes.io/name', 'podmin.dev/nodegroup', 'A_b.c-D']) {
      expect(isQualifiedName(ok)).toBe(true);
    }
    for (const bad of ['', '/name', 'Example.com/x', 'a/', 'a b', '-a', 'a/b/c', 'x'.repeat(64)]) {
      expect(isQualifiedName(bad)).toBe(false);
    }
  });

  it('isLabelValue', () => {
    for (const ok of ['', 'v1', 'A_b.c-D']) {
      expect(isLabelValue(ok)).toBe(true);
    }
    for (const bad of ['-a', 'a b', 'a/b', 'x'.repeat(64)]) {
      expect(isLabelValue(bad)).toBe(false);
    }
  });
});
