import pLimit from 'p-limit';
import { PodminError } from '@podmin/util-errors';
import { parsePodKey, parseServiceKey } from '@podmin/util-desired-state';
import type { DesiredStateReader, SignalOptions } from './desired-state.port';
import { readPayload } from './payload-store';

/**
 * Verified payload bytes kept between commands, keyed by SHA-512 digest: payloads are
 * content-addressed and immutable, so bytes verified once never need fetching again.
 */
export interface PayloadCache {
  /** The bytes stored for `digest`, already checked to hash to it; undefined on a miss. */
  get(digest: string): Promise<Buffer | undefined>;
  /** Stores bytes verified to hash to `digest`. */
  put(digest: string, body: Buffer): Promise<void>;
}

/** Options of {@link readPayloads}. */
export interface ReadPayloadsOptions extends SignalOptions {
  /** Where verified payloads are kept between commands (none: every payload is fetched). */
  cache?: PayloadCache;
  /** Object reads in flight at once ({@link DEFAULT_READ_CONCURRENCY}). */
  concurrency?: number;
}

/** The outcome of reading one payload key: its verified bytes or why it could not be read. */
export type PayloadRead = { ok: true; body: Buffer } | { ok: false; error: unknown };

/** Object reads {@link readPayloads} keeps in flight by default. */
export const DEFAULT_READ_CONCURRENCY = 16;

/** The SHA-512 digest a content-addressed payload key names, or undefined for another key. */
export function payloadDigest(key: string): string | undefined {
  return parsePodKey(key)?.digest ?? parseServiceKey(key)?.digest;
}

/**
 * Reads many content-addressed payloads, each verified against the digest in its key: every
 * distinct digest is looked up in `cache` first and otherwise fetched once, with at most
 * `concurrency` reads in flight. Keys sharing a digest (one Pod in many NodeGroups) share one
 * read; when that object fails verification the next key of the digest is tried, so one
 * tampered object never hides an intact one. Only verified bytes reach the cache. Failures
 * are per key in the result, never thrown, except cancellation through `signal`.
 */
export async function readPayloads(
  store: Pick<DesiredStateReader, 'get'>,
  keys: Iterable<string>,
  options: ReadPayloadsOptions = {},
): Promise<Map<string, PayloadRead>> {
  const results = new Map<string, PayloadRead>();
  const byDigest = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) continue;
    seen.add(key);
    const digest = payloadDigest(key);
    if (digest === undefined) {
      results.set(key, {
        ok: false,
        error: new PodminError('INTERNAL', `reading ${key}: not a content-addressed payload key`),
      });
      continue;
    }
    const paths = byDigest.get(digest);
    if (paths === undefined) byDigest.set(digest, [key]);
    else paths.push(key);
  }
  const { cache, signal } = options;
  const limit = pLimit(Math.max(1, options.concurrency ?? DEFAULT_READ_CONCURRENCY));
  // Cache writes run beside the reads, not in their slots: a slot held for a local file write
  // is one read fewer in flight (they are awaited before returning).
  const writes: Array<Promise<void>> = [];
  const readDigest = async (digest: string, paths: readonly string[]): Promise<void> => {
    const cached = await cache?.get(digest);
    if (cached !== undefined) {
      for (const path of paths) results.set(path, { ok: true, body: cached });
      return;
    }
    for (const [i, path] of paths.entries()) {
      signal?.throwIfAborted();
      try {
        const body = await readPayload(store, path, signal === undefined ? {} : { signal });
        // A cache that fails to keep the bytes only costs a later read.
        if (cache !== undefined) writes.push(cache.put(digest, body).catch(() => undefined));
        for (const same of paths.slice(i)) results.set(same, { ok: true, body });
        return;
      } catch (err) {
        results.set(path, { ok: false, error: err });
      }
    }
  };
  await Promise.all([...byDigest].map(([digest, paths]) => limit(() => readDigest(digest, paths))));
  await Promise.all(writes);
  signal?.throwIfAborted();
  return results;
}
