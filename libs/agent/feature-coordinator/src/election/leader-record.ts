import { ElectionError } from './election-error';

/** The object key of the cluster-wide election record (s3lect's lock object). */
export const LEADER_RECORD_KEY = 'dns/leader.json';

/** Largest record accepted on read; s3lect's record is under 200 bytes, extra fields included. */
export const MAX_LEADER_RECORD_BYTES = 16 * 1024;

/**
 * A Go `time.Time` as it travels in JSON: an instant with nanosecond precision plus the
 * writer's zone offset (kept so a Go-written record re-serializes byte for byte).
 */
export interface GoTime {
  /** Whole seconds since 1970-01-01T00:00:00Z (negative before it; year 1 is about −6.2e10). */
  readonly unixSeconds: number;
  /** Nanoseconds within the second, 0 through 999,999,999. */
  readonly nanos: number;
  /** The writer's UTC offset in minutes (0 is written as `Z`). */
  readonly offsetMinutes: number;
}

/** Go's zero `time.Time` (`0001-01-01T00:00:00Z`): in s3lect's record it means "resigned". */
export const GO_ZERO_TIME: GoTime = Object.freeze({
  unixSeconds: -62_135_596_800,
  nanos: 0,
  offsetMinutes: 0,
});

/** The s3lect record in `dns/leader.json` (Go struct `{LeaderID, LeaderAddr, LastUpdated}`). */
export interface LeaderRecord {
  /** The leader's node id; empty when absent (Go `omitempty`). */
  readonly leaderID: string;
  /** The leader's coordination address (`host:port`, `[v6]:port`); empty when absent. */
  readonly leaderAddr: string;
  /** When the leader last wrote; {@link GO_ZERO_TIME} when it resigned. */
  readonly lastUpdated: GoTime;
}

/** True when `time` is Go's zero instant, whatever zone it was written in (Go's `IsZero`). */
export function isGoZeroTime(time: GoTime): boolean {
  return time.unixSeconds === GO_ZERO_TIME.unixSeconds && time.nanos === 0;
}

/** True when the record says its leader resigned (zero `lastUpdated`) or names no leader. */
export function isResigned(record: LeaderRecord): boolean {
  return isGoZeroTime(record.lastUpdated) || record.leaderID === '';
}

/** A Go time for a JavaScript Date (millisecond precision), written in UTC. */
export function goTimeFromDate(date: Date): GoTime {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) {
    throw new ElectionError('INVALID_ARGUMENT', 'writing a leader record: invalid date');
  }
  const unixSeconds = Math.floor(ms / 1000);
  return { unixSeconds, nanos: (ms - unixSeconds * 1000) * 1_000_000, offsetMinutes: 0 };
}

// Go 1.20+ `time.Time.UnmarshalJSON` accepts exactly RFC 3339 with an optional fraction.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp the way Go's `time.Time` JSON decoder does: nanoseconds kept,
 * digits beyond the ninth truncated (as Go does), calendar and offset ranges checked.
 * Written by hand because no JavaScript date library keeps nanoseconds and the zone offset.
 */
export function parseGoTime(text: string): GoTime {
  const m = RFC3339.exec(text);
  const bad = (why: string): never => {
    throw new ElectionError('INVALID_ARGUMENT', `parsing time ${JSON.stringify(text)}: ${why}`);
  };
  if (m === null) return bad('not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM))');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12) bad('month out of range');
  if (day < 1 || day > daysInMonth(year, month)) bad('day out of range');
  if (hour > 23) bad('hour out of range');
  if (minute > 59) bad('minute out of range');
  if (second > 59) bad('second out of range');
  const fraction = m[7] ?? '';
  const nanos = fraction === '' ? 0 : Number(fraction.slice(0, 9).padEnd(9, '0'));
  let offsetMinutes = 0;
  if (m[8] !== undefined) {
    const offHours = Number(m[9]);
    const offMinutes = Number(m[10]);
    if (offHours > 23 || offMinutes > 59) bad('time zone offset out of range');
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (offHours * 60 + offMinutes);
  }
  const localSeconds =
    daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
  return { unixSeconds: localSeconds - offsetMinutes * 60, nanos, offsetMinutes };
}

/**
 * Formats like Go's `time.Time.MarshalJSON` (layout RFC3339Nano): the writer's local wall time,
 * fraction with trailing zeros trimmed (none when zero), `Z` for a zero offset.
 */
export function formatGoTime(time: GoTime): string {
  const { unixSeconds, nanos, offsetMinutes } = time;
  if (
    !Number.isInteger(unixSeconds) ||
    !Number.isInteger(nanos) ||
    nanos < 0 ||
    nanos > 999_999_999
  ) {
    throw new ElectionError(
      'INVALID_ARGUMENT',
      'formatting a Go time: invalid seconds or nanoseconds',
    );
  }
  if (!Number.isInteger(offsetMinutes) || Math.abs(offsetMinutes) >= 24 * 60) {
    throw new ElectionError('INVALID_ARGUMENT', 'formatting a Go time: offset must be under 24 h');
  }
  const local = unixSeconds + offsetMinutes * 60;
  const days = Math.floor(local / 86_400);
  const secondsOfDay = local - days * 86_400;
  const { year, month, day } = civilFromDays(days);
  if (year < 0 || year > 9999) {
    // Go's MarshalJSON refuses years outside [0, 9999] too.
    throw new ElectionError('INVALID_ARGUMENT', 'formatting a Go time: year outside [0, 9999]');
  }
  const two = (n: number): string => String(n).padStart(2, '0');
  const date = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`;
  const clock = `${two(Math.floor(secondsOfDay / 3600))}:${two(Math.floor(secondsOfDay / 60) % 60)}:${two(secondsOfDay % 60)}`;
  const fraction = nanos === 0 ? '' : `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}`;
  const abs = Math.abs(offsetMinutes);
  const zone =
    offsetMinutes === 0
      ? 'Z'
      : `${offsetMinutes < 0 ? '-' : '+'}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
  return `${date}T${clock}${fraction}${zone}`;
}

/** Milliseconds since the Unix epoch of a Go time (sub-millisecond part dropped). */
export function goTimeToEpochMs(time: GoTime): number {
  return time.unixSeconds * 1000 + Math.floor(time.nanos / 1_000_000);
}

const FIELDS = ['leaderID', 'leaderAddr', 'lastUpdated'] as const;
type Field = (typeof FIELDS)[number];

/**
 * Parses `dns/leader.json` as a Go reader of s3lect's struct would: a JSON object whose keys
 * match the fields case-insensitively (exact spelling preferred, later keys win), `null` leaves
 * a field empty, unknown fields are ignored, a missing `lastUpdated` is the zero time; a wrong
 * type, a bad timestamp, non-object JSON or more than {@link MAX_LEADER_RECORD_BYTES} is an
 * INVALID_ARGUMENT error.
 */
export function parseLeaderRecord(body: Buffer | string): LeaderRecord {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const fail = (why: string, cause?: unknown): never => {
    throw new ElectionError('INVALID_ARGUMENT', `parsing ${LEADER_RECORD_KEY}: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
    });
  };
  if (bytes.length > MAX_LEADER_RECORD_BYTES) {
    fail(`${bytes.length} bytes is over the ${MAX_LEADER_RECORD_BYTES}-byte bound`);
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    return fail('not UTF-8 JSON', err);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('not a JSON object');
  }
  const picked = new Map<Field, { value: unknown; exact: boolean }>();
  for (const [key, v] of Object.entries(value)) {
    const field = FIELDS.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined) continue;
    const exact = key === field;
    const previous = picked.get(field);
    if (previous?.exact === true && !exact) continue;
    picked.set(field, { value: v, exact });
  }
  const text = (field: Field): string => {
    const v = picked.get(field)?.value;
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') return fail(`${field} must be a string`);
    return v;
  };
  const leaderID = text('leaderID');
  const leaderAddr = text('leaderAddr');
  const stamp = text('lastUpdated');
  let lastUpdated: GoTime = GO_ZERO_TIME;
  if (stamp !== '') {
    try {
      lastUpdated = parseGoTime(stamp);
    } catch (err) {
      return fail(`lastUpdated: ${(err as Error).message}`, err);
    }
  }
  return { leaderID, leaderAddr, lastUpdated };
}

/**
 * Serializes a record exactly as Go's `json.Marshal` writes s3lect's struct: field order
 * `leaderID`, `leaderAddr`, `lastUpdated`, empty strings omitted, Go's HTML-safe escaping,
 * no trailing newline.
 */
export function serializeLeaderRecord(record: LeaderRecord): string {
  const parts: string[] = [];
  if (record.leaderID !== '') parts.push(`"leaderID":${goJsonString(record.leaderID)}`);
  if (record.leaderAddr !== '') parts.push(`"leaderAddr":${goJsonString(record.leaderAddr)}`);
  parts.push(`"lastUpdated":${goJsonString(formatGoTime(record.lastUpdated))}`);
  return `{${parts.join(',')}}`;
}

// Go's encoder escapes <, >, & and the JavaScript line separators that JSON.stringify keeps.
const GO_EXTRA_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function goJsonString(value: string): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => GO_EXTRA_ESCAPES[c] ?? c);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's algorithms):
// Date cannot express years 0–99 without remapping them to 1900–1999.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}
