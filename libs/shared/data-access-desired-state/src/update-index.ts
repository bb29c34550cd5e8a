import { hasCode, PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  editCanonicalIndex,
  parseIndex,
  parseSignedIndex,
  sameEntry,
  serializeIndex,
  splitSignature,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEdit,
  type IndexEntry,
  type IndexSignature,
  type SplitIndexText,
} from '@podmin/util-desired-state';
import { signIndexText, type IndexSigner } from '@podmin/util-trust';
import type { DesiredStateStore, SignalOptions } from './desired-state.port';
import { readIndexObject } from './index-store';

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
  /**
   * Signs every index write as a trusted deployer (after the edit, on every attempt, so a lost
   * race re-signs what it re-applied). Without it the index is written unsigned: one that carried
   * a signature loses it, which nodes of a cluster with trusted deployers refuse.
   */
  signing?: IndexSigning;
}

/** Who signs index writes, and for which cluster (the signed statement names it). */
export interface IndexSigning {
  signer: IndexSigner;
  cluster: string;
}

/** What an index update did. */
export interface UpdateIndexResult {
  /** False when `mutate` found nothing to change (nothing written). */
  changed: boolean;
  /** How many read-mutate-write attempts it took. */
  attempts: number;
  /** The signature written with the index; undefined when unsigned or nothing was written. */
  signature?: IndexSignature;
}

/**
 * Applies `mutate` to the index by ETag compare-and-swap: reads it, applies `mutate`, writes
 * create-only when there was no index or if-match otherwise, and on a competing writer rereads
 * and reapplies, bounded by `maxAttempts`. `mutate` returns undefined when nothing needs writing.
 */
export function updateIndex(
  store: DesiredStateStore,
  mutate: (index: DesiredIndex) => DesiredIndex | undefined,
  options: UpdateIndexOptions = {},
): Promise<UpdateIndexResult> {
  return compareAndSwap(
    store,
    (entriesText) => {
      const next = mutate(parseIndex(entriesText));
      return next === undefined ? undefined : serializeIndex(next);
    },
    options,
  );
}

/** What {@link updateIndexEntry} did, and the entry its winning attempt replaced. */
export interface UpdateIndexEntryResult extends UpdateIndexResult {
  /** The entry the key held in the index the winning (or unchanged) attempt read. */
  previous?: IndexEntry;
}

/**
 * Sets one entry (or removes it, for null) by the same compare-and-swap as {@link updateIndex},
 * editing the index's canonical text in place where it is canonical (see editCanonicalIndex:
 * same bytes, without parsing and rewriting every entry of a large index) and through the strict
 * parse otherwise. Unchanged when the entry is already set, or already absent; `onMissing` may
 * throw for a removal of an absent key instead.
 */
export async function updateIndexEntry(
  store: DesiredStateStore,
  key: string,
  entry: IndexEntry | null,
  options: UpdateIndexOptions & { onMissing?: () => void } = {},
): Promise<UpdateIndexEntryResult> {
  let previous: IndexEntry | undefined;
  const result = await compareAndSwap(
    store,
    (text) => {
      const edit = editCanonicalIndex(text, key, entry) ?? parsedEdit(text, key, entry);
      previous = edit.previous;
      if (entry === null && previous === undefined) options.onMissing?.();
      return edit.text;
    },
    options,
  );
  return previous === undefined ? result : { ...result, previous };
}

const EMPTY_INDEX = serializeIndex({});

/** The edit through the strict parse: for index text that is not in canonical form. */
function parsedEdit(text: string, key: string, entry: IndexEntry | null): IndexEdit {
  const index = parseIndex(text);
  const previous = index[key];
  if (entry === null)
    return { previous, text: previous && serializeIndex(withoutDeployment(index, key)) };
  if (sameEntry(previous, entry)) return { previous, text: undefined };
  return { previous, text: serializeIndex(withDeployment(index, key, entry)) };
}

/**
 * The index text as read, split into its entries text and the signature it carried: the fast
 * split when the signature member is in the form writers put it (or absent), else the strict
 * parse, re-serialized (so edits never see the member, and always get text parseIndex accepts
 * or the error naming why not).
 */
function splitIndex(text: string): SplitIndexText {
  const split = splitSignature(text);
  if (split !== undefined) return split;
  const { index, signature } = parseSignedIndex(text);
  const entriesText = serializeIndex(index);
  return signature === undefined ? { entriesText } : { entriesText, signature };
}

/**
 * The loop both updates share: `change` maps the index's entries text as read (canonical empty
 * text when there is no index; never the signature member) to the entries text to write, or to
 * undefined when nothing needs writing (then nothing is written, signed or not); with `signing`
 * the result is signed as the write after the signature read. A lost race rereads, asks again
 * and re-signs.
 */
async function compareAndSwap(
  store: DesiredStateStore,
  change: (entriesText: string) => string | undefined,
  options: UpdateIndexOptions,
): Promise<UpdateIndexResult> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = options.backoff ?? jitteredBackoff;
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const { signing } = options;
  let prepared = options.beforeFirstWrite === undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const read = await readIndexObject(store, signal);
    const current: SplitIndexText =
      read.status === 'present'
        ? splitIndex(read.body.toString('utf8'))
        : { entriesText: EMPTY_INDEX };
    const entriesText = change(current.entriesText);
    if (entriesText === undefined) return { changed: false, attempts: attempt };
    if (!prepared) {
      await options.beforeFirstWrite?.();
      prepared = true;
    }
    options.signal?.throwIfAborted();
    let body = entriesText;
    let signature: IndexSignature | undefined;
    if (signing !== undefined) {
      ({ text: body, signature } = await signIndexText(
        signing.signer,
        signing.cluster,
        entriesText,
        current.signature,
      ));
      options.signal?.throwIfAborted();
    }
    try {
      if (read.status === 'absent') await store.putIfAbsent(INDEX_KEY, body);
      else await store.putIfMatch(INDEX_KEY, body, read.etag);
      return signature === undefined
        ? { changed: true, attempts: attempt }
        : { changed: true, attempts: attempt, signature };
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
