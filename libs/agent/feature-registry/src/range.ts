import type { ByteRange } from '@podmin/data-access-object-store';

/**
 * Parses a `Range` header. Only one `bytes=` range is honoured; undefined means serve the
 * whole object (no header, another unit, several ranges or a malformed value, which RFC 9110
 * lets a server ignore).
 */
export function parseRangeHeader(header: string | undefined): ByteRange | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    return Number.isSafeInteger(suffix) ? { suffix } : undefined;
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start)) return undefined;
  if (last === '') return { start };
  const end = Number(last);
  if (!Number.isSafeInteger(end) || end < start) return undefined;
  return { start, end };
}
