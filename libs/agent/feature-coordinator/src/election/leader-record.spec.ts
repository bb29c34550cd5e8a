import {
  GO_ZERO_TIME,
  MAX_LEADER_RECORD_BYTES,
  formatGoTime,
  goTimeFromDate,
  goTimeToEpochMs,
  isGoZeroTime,
  isResigned,
  parseGoTime,
  parseLeaderRecord,
  serializeLeaderRecord,
} from './leader-record';

describe('Go time.Time in RFC 3339', () => {
  it('keeps nanoseconds and the writer offset through a round trip', () => {
    const t = parseGoTime('2026-12-01T10:00:00.123456789+01:00');
    expect(t).toEqual({
      unixSeconds: Date.UTC(2026, 11, 1, 9, 0, 0) / 1000,
      nanos: 123_456_789,
      offsetMinutes: 60,
    });
    expect(formatGoTime(t)).toBe('2026-12-01T10:00:00.123456789+01:00');
  });

  it.each([
    ['2026-12-01T10:00:00Z', '2026-12-01T10:00:00Z'],
    ['2026-12-01T10:00:00.5Z', '2026-12-01T10:00:00.5Z'],
    // Go's RFC3339Nano trims trailing zeros; it reads more than nine digits by truncating.
    ['2026-12-01T10:00:00.120000000Z', '2026-12-01T10:00:00.12Z'],
    ['2026-12-01T10:00:00.1234567891234Z', '2026-12-01T10:00:00.123456789Z'],
    ['2026-12-01T10:00:00+00:00', '2026-12-01T10:00:00Z'],
    ['2024-02-29T23:59:59.000000001-09:30', '2024-02-29T23:59:59.000000001-09:30'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z'],
  ])('reads %s and writes it as Go would: %s', (input, output) => {
    expect(formatGoTime(parseGoTime(input))).toBe(output);
  });

  it('computes the same instant as Date for ordinary years', () => {
    const t = parseGoTime('2030-07-15T08:09:10.250-07:00');
    expect(goTimeToEpochMs(t)).toBe(Date.parse('2030-07-15T08:09:10.250-07:00'));
  });

  it.each([
    ['2026-13-01T00:00:00Z', /month/],
    ['2026-02-29T00:00:00Z', /day/],
    ['2026-04-31T00:00:00Z', /day/],
    ['2026-12-01T24:00:00Z', /hour/],
    ['2026-12-01T10:60:00Z', /minute/],
    ['2026-12-01T10:00:60Z', /second/],
    ['2026-12-01T10:00:00+24:00', /offset/],
    ['2026-12-01 10:00:00Z', /RFC 3339/],
    ['2026-12-01t10:00:00z', /RFC 3339/],
    ['2026-12-01T10:00:00', /RFC 3339/],
    ['2026-12-01T10:00:00.Z', /RFC 3339/],
    ['26-12-01T10:00:00Z', /RFC 3339/],
  ])('rejects %s', (input, why) => {
    expect(() => parseGoTime(input)).toThrow(why);
  });

  it('treats the zero instant as zero in any zone, like Go IsZero', () => {
    expect(isGoZeroTime(parseGoTime('0001-01-01T00:00:00Z'))).toBe(true);
    expect(isGoZeroTime(parseGoTime('0001-01-01T01:00:00+01:00'))).toBe(true);
    expect(isGoZeroTime(parseGoTime('0001-01-01T00:00:00.000000001Z'))).toBe(false);
  });

  it('converts a Date to a UTC Go time with millisecond nanos', () => {
    const t = goTimeFromDate(new Date('2026-12-01T10:00:00.042Z'));
    expect(t).toEqual({ unixSeconds: 1796119200, nanos: 42_000_000, offsetMinutes: 0 });
    expect(formatGoTime(t)).toBe('2026-12-01T10:00:00.042Z');
    expect(() => goTimeFromDate(new Date(Number.NaN))).toThrow(/invalid date/);
  });
});

describe('the s3lect record dns/leader.json', () => {
  const GO_WRITTEN =
    '{"leaderID":"n1","leaderAddr":"[2600::1]:8081","lastUpdated":"2026-12-01T10:00:00.123456789+01:00"}';

  it('round-trips a Go-written record byte for byte', () => {
    const record = parseLeaderRecord(GO_WRITTEN);
    expect(record.leaderID).toBe('n1');
    expect(record.leaderAddr).toBe('[2600::1]:8081');
    expect(record.lastUpdated.nanos).toBe(123_456_789);
    expect(isResigned(record)).toBe(false);
    expect(serializeLeaderRecord(record)).toBe(GO_WRITTEN);
  });

  it('omits empty strings and reads the resigned record as zero time', () => {
    const text = serializeLeaderRecord({ leaderID: '', leaderAddr: '', lastUpdated: GO_ZERO_TIME });
    expect(text).toBe('{"lastUpdated":"0001-01-01T00:00:00Z"}');
    const resigned = parseLeaderRecord('{"leaderID":"n1","lastUpdated":"0001-01-01T00:00:00Z"}');
    expect(resigned.leaderAddr).toBe('');
    expect(isResigned(resigned)).toBe(true);
    expect(serializeLeaderRecord(resigned)).toBe(
      '{"leaderID":"n1","lastUpdated":"0001-01-01T00:00:00Z"}',
    );
  });

  it('reads as leniently as Go: unknown fields, null, missing time, case-insensitive keys', () => {
    const record = parseLeaderRecord(
      '{"LEADERID":"x","leaderID":"n2","leaderaddr":"[::1]:1","term":7,"nested":{"a":[1]},"lastUpdated":null}',
    );
    expect(record).toEqual({ leaderID: 'n2', leaderAddr: '[::1]:1', lastUpdated: GO_ZERO_TIME });
    expect(parseLeaderRecord('{"leaderID":null}').leaderID).toBe('');
    expect(isResigned(parseLeaderRecord('{"leaderID":"n3"}'))).toBe(true);
  });

  it('writes with Go escaping of HTML characters and line separators', () => {
    const text = serializeLeaderRecord({
      leaderID: 'a<b>&c\u2028',
      leaderAddr: 'h:1',
      lastUpdated: GO_ZERO_TIME,
    });
    expect(text).toBe(
      '{"leaderID":"a\\u003cb\\u003e\\u0026c\\u2028","leaderAddr":"h:1","lastUpdated":"0001-01-01T00:00:00Z"}',
    );
    expect(parseLeaderRecord(text).leaderID).toBe('a<b>&c\u2028');
  });

  it.each([
    ['[]', /not a JSON object/],
    ['null', /not a JSON object/],
    ['"n1"', /not a JSON object/],
    ['{"leaderID":', /not UTF-8 JSON/],
    ['{"leaderID":1}', /leaderID must be a string/],
    ['{"leaderAddr":true}', /leaderAddr must be a string/],
    ['{"lastUpdated":1764583200}', /lastUpdated must be a string/],
    ['{"lastUpdated":"yesterday"}', /lastUpdated: parsing time/],
  ])('rejects %s', (input, why) => {
    let caught: unknown;
    try {
      parseLeaderRecord(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(why) });
  });

  it('rejects invalid UTF-8 and records over the size bound', () => {
    expect(() => parseLeaderRecord(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(/UTF-8/);
    const big = `{"leaderID":"n1","pad":"${'x'.repeat(MAX_LEADER_RECORD_BYTES)}"}`;
    expect(() => parseLeaderRecord(big)).toThrow(/byte bound/);
  });
});
