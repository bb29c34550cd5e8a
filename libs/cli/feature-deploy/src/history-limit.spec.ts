import { DEFAULT_HISTORY_LIMIT, limitRows } from './history-limit';

describe('limitRows', () => {
  const rows = ['r5', 'r4', 'r3', 'r2', 'r1'];

  it('keeps the newest rows and counts the rest', () => {
    expect(limitRows(rows, 2)).toEqual({ rows: ['r5', 'r4'], omitted: 3 });
    expect(limitRows(rows, 5)).toEqual({ rows, omitted: 0 });
    expect(limitRows(rows, 50)).toEqual({ rows, omitted: 0 });
  });

  it('keeps every row for 0', () => {
    expect(limitRows(rows, 0)).toEqual({ rows, omitted: 0 });
  });

  it('defaults to 10', () => {
    expect(DEFAULT_HISTORY_LIMIT).toBe(10);
  });

  it('refuses a negative or fractional limit', () => {
    expect(() => limitRows(rows, -1)).toThrow(RangeError);
    expect(() => limitRows(rows, 1.5)).toThrow(/whole number/);
  });
});
