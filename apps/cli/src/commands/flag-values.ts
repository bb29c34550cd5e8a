import { UsageError } from '@podmin/cli-util-io';
import { parseDuration } from './deploy/deploy.command';

/**
 * `history --limit`: a whole number of rows, 0 for all; a UsageError naming the flag for
 * anything else (negative, fractional, not a number).
 */
export function parseLimit(value: unknown): number {
  const text = String(value).trim();
  if (!/^\d{1,9}$/.test(text))
    throw new UsageError(
      `--limit: ${JSON.stringify(String(value))} is not a whole number of revisions; use 0 or more (0 shows all)`,
    );
  return Number(text);
}

/**
 * `status --retention`: a duration like 24h, 90m or 3600s, at least `minMs`; a UsageError
 * naming the flag otherwise.
 */
export function parseRetention(value: unknown, minMs: number): number {
  const ms = parseDuration(String(value));
  if (ms === undefined)
    throw new UsageError(
      `--retention: ${JSON.stringify(String(value))} is not a duration like 24h, 90m or 3600s`,
    );
  if (ms < minMs)
    throw new UsageError(
      `--retention: ${JSON.stringify(String(value))} is shorter than ${minMs / 60_000}m, three heartbeats: live nodes would be hidden`,
      { hint: 'the default is 24h; see `podmin status --help`', showUsage: false },
    );
  return ms;
}
