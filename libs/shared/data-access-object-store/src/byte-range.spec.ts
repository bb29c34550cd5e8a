import { assertValidRange, formatRange, resolveRange } from './byte-range';

describe('byte ranges', () => {
  it('resolves ranges against the object size', () => {
    expect(resolveRange({ start: 0, end: 99 }, 10)).toEqual({ start: 0, end: 9 });
    expect(resolveRange({ start: 4 }, 10)).toEqual({ start: 4, end: 9 });
    expect(resolveRange({ suffix: 3 }, 10)).toEqual({ start: 7, end: 9 });
    expect(resolveRange({ suffix: 30 }, 10)).toEqual({ start: 0, end: 9 });
    expect(resolveRange({ start: 10 }, 10)).toBeUndefined();
    expect(resolveRange({ suffix: 0 }, 10)).toBeUndefined();
    expect(resolveRange({ suffix: 1 }, 0)).toBeUndefined();
  });

  it('formats ranges for S3', () => {
    expect(formatRange({ start: 1, end: 2 })).toBe('bytes=1-2');
    expect(formatRange({ start: 1 })).toBe('bytes=1-');
    expect(formatRange({ suffix: 9 })).toBe('bytes=-9');
  });

  it('rejects ranges that name no bytes with INVALID_ARGUMENT', () => {
    for (const bad of [
      { start: -1 },
      { start: 1.5 },
      { start: 5, end: 4 },
      { suffix: -3 },
      { start: 0, end: Number.MAX_SAFE_INTEGER + 2 },
    ]) {
      expect(thrownBy(() => assertValidRange(bad, 'opening x'))).toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
    expect(() => assertValidRange({ start: 3, end: 3 }, 'opening x')).not.toThrow();
    expect(() => assertValidRange({ suffix: 0 }, 'opening x')).not.toThrow();
  });
});

/** What `fn` throws, or undefined when it returns. */
function thrownBy(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
