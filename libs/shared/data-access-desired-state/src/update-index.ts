import { hasCode, PodminError } from '@podmin/util-errors';
import { INDEX_KEY, serializeIndex, type DesiredIndex } from '@podmin/util-desired-state';
import type { DesiredStateStore, SignalOptions } from './desired-state.port';
import { entriesOf, readIndex } from './index-store';

/** Waits between conflicting compare-and-swap attempts (injected so tests need not sleep). */
export type Backoff = (attempt: number) => Promise<void>;

/** Jittered exponential backoff: 10 ms doubling to 400 ms, times 0.5–1.5. */
export const jitteredBackoff: Backoff = (attempt) =>
  new Promise((resolve) =>
    setTimeout(resolve, Math.min(400, 10 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random())),
  );

/** Default bound of the compare-and-swap loop. */
export const DEFAULT_MAX_ATTEMPTS = 64;

/** Bounds and hooks of {@link updateIndex}. */
export interface UpdateIndexOptions extends SignalOptions {
  /** Attempts before CONFLICT_RETRIES_EXHAUSTED (default 64). */
  maxAttempts?: number;
  /** Wait after a lost race (default {@link jitteredBackoff}). */
  backoff?: Backoff;
  /** Runs once, before the first index write (payloads go here, so a rejected change writes nothing). */
  beforeFirstWrite?: () => Promise<void>;
}

/** What an index update did. */
export interface UpdateIndexResult {
  /** False when `mutate` found nothing to change (nothing written). */
  changed: boolean;
  /** How many read-mutate-write attempts it took. */
  attempts: number;
}

/**
 * Applies `mutate` to the index by ETag compare-and-swap: reads it, applies `mutate`, writes
 * create-only when there was no index or if-match otherwise, and on a competing writer rereads
 * and reapplies, bounded by `maxAttempts`. `mutate` returns undefined when nothing needs writing.
 */
export async function updateIndex(
  store: DesiredStateStore,
  mutate: (index: DesiredIndex) => DesiredIndex | undefined,
  options: UpdateIndexOptions = {},
): Promise<UpdateIndexResult> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = options.backoff ?? jitteredBackoff;
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  let prepared = options.beforeFirstWrite === undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const read = await readIndex(store, signal);
    const next = mutate(entriesOf(read));
    if (next === undefined) return { changed: false, attempts: attempt };
    if (!prepared) {
      await options.beforeFirstWrite?.();
      prepared = true;
    }
    const body = serializeIndex(next);
    options.signal?.throwIfAborted();
    try {
      if (read.status === 'absent') await store.putIfAbsent(INDEX_KEY, body);
      else await store.putIfMatch(INDEX_KEY, body, read.etag);
      return { changed: true, attempts: attempt };
    } catch (err) {
      // CONFLICT (S3's 409) asks for the same reread and retry as a lost compare-and-swap.
      if (!hasCode(err, 'PRECONDITION_FAILED') && !hasCode(err, 'CONFLICT')) throw err;
      await backoff(attempt);
    }
  }
  throw new PodminError(
    'CONFLICT_RETRIES_EXHAUSTED',
    `updating ${INDEX_KEY}: another writer changed it ${maxAttempts} times in a row`,
    {
      hint: 'retry the command; nothing was committed',
    },
  );
}
