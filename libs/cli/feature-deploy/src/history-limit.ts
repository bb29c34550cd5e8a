/** Rows `podmin history` shows unless `--limit` says otherwise. */
export const DEFAULT_HISTORY_LIMIT = 10;

/**
 * The first `limit` rows (newest first, as history lists them) and how many were left out;
 * `limit` 0 keeps every row. A negative or fractional limit is a caller's bug: RangeError.
 */
export function limitRows<T>(rows: readonly T[], limit: number): { rows: T[]; omitted: number } {
  if (!Number.isInteger(limit) || limit < 0)
    throw new RangeError(`history limit must be a whole number, 0 or more; got ${limit}`);
  const kept = limit === 0 ? rows.slice() : rows.slice(0, limit);
  return { rows: kept, omitted: rows.length - kept.length };
}
