import { formatRange, parseRangeHeader, resolveRange } from './range';

describe('Range', () => {
  it('parses one bytes range and ignores the rest', () => {
    expect(parseRangeHeader('bytes=0-99')).toEqual({ start: 0, end: 99 });
    expect(parseRangeHeader('bytes=100-')).toEqual({ start: 100 });
    expect(parseRangeHeader('bytes=-5')).toEqual({ suffix: 5 });
    expect(parseRangeHeader(' Bytes = 1 - 2 ')).toEqual({ start: 1, end: 2 });
    for (const ignored of [
      undefined,
      'bytes=5-1',
      'bytes=0-1,4-5',
      'items=0-1',
      'bytes=-',
      'bytes=a-b',
      `bytes=0-${'9'.repeat(20)}`,
    ]) {
      expect(parseRangeHeader(ignored)).toBeUndefined();
    }
  });

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
});
