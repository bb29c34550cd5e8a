import { hasCode } from '@podmin/util-errors';
import {
  INDEX_KEY,
  MAX_INDEX_BYTES,
  parseSignedIndex,
  type DesiredIndex,
  type IndexSignature,
} from '@podmin/util-desired-state';
import type { DesiredStateReader, SignalOptions, StoredObject } from './desired-state.port';

/**
 * The committed index as read: `absent` when there is no index object at all (distinct from
 * an empty index, which is `present` with no entries), or the strictly parsed index, its ETag
 * and the deployer's signature it carries (none on an unsigned index; nodes verify it).
 */
export type IndexRead =
  | { status: 'absent' }
  | { status: 'present'; index: DesiredIndex; etag: string; signature?: IndexSignature };

/** A conditional index read: `unchanged` when the ETag still matches, else a fresh read. */
export type IndexChange = IndexRead | { status: 'unchanged'; etag: string };

/** Version of the index a reader saw: its ETag, or null when there was no index. */
export type IndexVersion = string | null;

/** The version of an index read. */
export function versionOf(read: IndexRead): IndexVersion {
  return read.status === 'present' ? read.etag : null;
}

/** The entries of an index read (none when absent). */
export function entriesOf(read: IndexRead): DesiredIndex {
  return read.status === 'present' ? read.index : {};
}

/** The index object as stored, not yet parsed: for writers that edit its canonical text. */
export type IndexObjectRead = { status: 'absent' } | ({ status: 'present' } & StoredObject);

/** Reads `deployments/index.json`'s bytes (bounded), unparsed; a missing object is `absent`. */
export async function readIndexObject(
  store: Pick<DesiredStateReader, 'get'>,
  options: SignalOptions = {},
): Promise<IndexObjectRead> {
  try {
    return { status: 'present', ...(await store.get(INDEX_KEY, readOptions(options))) };
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return { status: 'absent' };
    throw err;
  }
}

/** Reads and strictly parses `deployments/index.json` (bounded); a missing object is `absent`. */
export async function readIndex(
  store: Pick<DesiredStateReader, 'get'>,
  options: SignalOptions = {},
): Promise<IndexRead> {
  const read = await readIndexObject(store, options);
  return read.status === 'absent' ? read : presentRead(read.body, read.etag);
}

/** Reads the index unless it is still at `etag` (conditional GET); a missing object is `absent`. */
export async function readIndexIfChanged(
  store: DesiredStateReader,
  etag: string,
  options: SignalOptions = {},
): Promise<IndexChange> {
  try {
    const result = await store.getIfChanged(INDEX_KEY, etag, readOptions(options));
    if (result.status === 'unchanged') return { status: 'unchanged', etag: result.etag };
    return presentRead(result.body, result.etag);
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return { status: 'absent' };
    throw err;
  }
}

/**
 * The fence before publishing what was staged from an index: true only when the committed
 * index is still the version seen (same ETag, or still absent). Costs one conditional read.
 */
export async function isIndexCurrent(
  store: DesiredStateReader,
  seen: IndexVersion,
  options: SignalOptions = {},
): Promise<boolean> {
  try {
    if (seen === null) {
      await store.get(INDEX_KEY, readOptions(options));
      return false;
    }
    const result = await store.getIfChanged(INDEX_KEY, seen, readOptions(options));
    return result.status === 'unchanged';
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return seen === null;
    throw err;
  }
}

/** A present index read; `signature` only when the index carries one. */
function presentRead(body: Buffer, etag: string): IndexRead {
  const { index, signature } = parseSignedIndex(body);
  return signature === undefined
    ? { status: 'present', index, etag }
    : { status: 'present', index, etag, signature };
}

function readOptions(options: SignalOptions): { maxBytes: number; signal?: AbortSignal } {
  return options.signal === undefined
    ? { maxBytes: MAX_INDEX_BYTES }
    : { maxBytes: MAX_INDEX_BYTES, signal: options.signal };
}
