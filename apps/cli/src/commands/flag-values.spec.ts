import { UsageError } from '@podmin/cli-util-io';
import { parseLimit, parseRetention } from './flag-values';

describe('parseLimit (history --limit)', () => {
  it('takes whole numbers, 0 meaning all', () => {
    expect([parseLimit('10'), parseLimit('0'), parseLimit(' 3 ')]).toEqual([10, 0, 3]);
  });

  it.each(['-1', '1.5', 'ten', '', '1e3'])('refuses %j naming the flag', (value) => {
    expect(() => parseLimit(value)).toThrow(UsageError);
    expect(() => parseLimit(value)).toThrow(/^--limit: .* is not a whole number/);
  });
});

describe('parseRetention (status --retention)', () => {
  const MIN = 15 * 60_000;

  it('takes 24h, 90m and seconds', () => {
    expect([
      parseRetention('24h', MIN),
      parseRetention('90m', MIN),
      parseRetention('3600', MIN),
    ]).toEqual([86_400_000, 5_400_000, 3_600_000]);
  });

  it('refuses what is not a duration, naming the flag', () => {
    expect(() => parseRetention('a day', MIN)).toThrow(
      '--retention: "a day" is not a duration like 24h, 90m or 3600s',
    );
    expect(() => parseRetention('-1h', MIN)).toThrow(UsageError);
  });

  it('refuses a window shorter than three heartbeats', () => {
    expect(() => parseRetention('10m', MIN)).toThrow(/--retention: "10m" is shorter than 15m/);
    expect(parseRetention('15m', MIN)).toBe(MIN);
  });
});
