import { PodminError } from '@podmin/util-errors';
import type { ByteRange } from './object-store.port';

/** Rejects a range that names no bytes at all: negative, fractional, or ending before it starts. */
export function assertValidRange(range: ByteRange, doing: string): void {
  const valid =
    'suffix' in range
      ? Number.isSafeInteger(range.suffix) && range.suffix >= 0
      : Number.isSafeInteger(range.start) &&
        range.start >= 0 &&
        (range.end === undefined || (Number.isSafeInteger(range.end) && range.end >= range.start));
  if (!valid) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: ${JSON.stringify(range)} is not a byte range (non-negative integers, end ≥ start)`,
    );
  }
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
