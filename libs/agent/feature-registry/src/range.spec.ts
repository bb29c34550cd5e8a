import { parseRangeHeader } from './range';

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
});
