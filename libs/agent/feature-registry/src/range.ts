import type { ByteRange } from './registry.ports';

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

/**
 * Resolves a range against an object of `size` bytes into inclusive `[start, end]`, clamping
 * the end to the object; undefined when unsatisfiable (start past the end, or a zero suffix).
 */
export function resolveRange(
  range: ByteRange,
  size: number,
): { start: number; end: number } | undefined {
  if ('suffix' in range) {
    if (range.suffix === 0 || size === 0) return undefined;
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start >= size) return undefined;
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

/** Formats a range as an HTTP `bytes=` value, e.g. for an S3 GetObject Range. */
export function formatRange(range: ByteRange): string {
  return 'suffix' in range ? `bytes=-${range.suffix}` : `bytes=${range.start}-${range.end ?? ''}`;
}
