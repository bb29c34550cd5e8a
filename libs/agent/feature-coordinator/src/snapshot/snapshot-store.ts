import { hasCode } from '@podmin/util-errors';
import type { DutyToken } from '../election/duty-gate';
import {
  MAX_SNAPSHOT_BYTES,
  decodeSnapshot,
  encodeSnapshot,
  type DecodeOptions,
  type ServiceSnapshot,
  type SnapshotService,
} from './snapshot-codec';
import { SnapshotCorruptError, SnapshotError } from './snapshot-error';
import type { SnapshotStore } from './snapshot.ports';
import { errorMessage } from '../error-message';

/** Object key of the leader's Service snapshot. */
export const SNAPSHOT_KEY = 'dns/services.pb';

/** The stored snapshot and the ETag it was read with (the fence of the next write). */
export interface SnapshotRead {
  readonly snapshot: ServiceSnapshot;
  readonly etag: string;
}

/** What a leader knows of the stored snapshot before writing: its ETag and generation. */
export interface SnapshotVersion {
  readonly etag: string;
  readonly generation: number;
  /** When equal to the new revision, nothing is written. Omit to force a write (e.g. over a corrupt object). */
  readonly revision?: string;
}

/** Result of {@link writeSnapshot}. */
export type SnapshotWrite =
  | { readonly status: 'written'; readonly snapshot: ServiceSnapshot; readonly etag: string }
  | { readonly status: 'unchanged'; readonly etag: string };

/** Options of {@link readSnapshot}. */
export interface ReadSnapshotOptions extends DecodeOptions {
  /** Cancels the read. */
  signal?: AbortSignal;
}

/**
 * Reads and strictly decodes `dns/services.pb` (bounded by MAX_SNAPSHOT_BYTES); undefined when
 * absent. An object that does not decode is a `SnapshotCorruptError` carrying its ETag.
 */
export async function readSnapshot(
  store: Pick<SnapshotStore, 'get'>,
  options: ReadSnapshotOptions = {},
): Promise<SnapshotRead | undefined> {
  let object;
  try {
    object = await store.get(SNAPSHOT_KEY, {
      maxBytes: MAX_SNAPSHOT_BYTES,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
    throw err;
  }
  try {
    const decodeOptions = options.cluster === undefined ? {} : { cluster: options.cluster };
    return { snapshot: decodeSnapshot(object.body, decodeOptions), etag: object.etag };
  } catch (err) {
    throw new SnapshotCorruptError(
      `reading ${SNAPSHOT_KEY} (ETag ${object.etag}): ${errorMessage(err)}`,
      object.etag,
      { cause: err, hint: 'the leader replaces it with its next snapshot' },
    );
  }
}

/** The version a read gives `writeSnapshot` (undefined when the object was absent). */
export function snapshotVersionOf(read: SnapshotRead | undefined): SnapshotVersion | undefined {
  return read === undefined
    ? undefined
    : { etag: read.etag, generation: read.snapshot.generation, revision: read.snapshot.revision };
}

/**
 * Writes `next` (its generation is replaced by the previous generation + 1, or 1) as the new
 * `dns/services.pb`, fenced by the object itself: create-only when `previous` is undefined, else
 * `If-Match` of the ETag that was read. So a superseded leader, whose ETag is stale once a newer
 * leader has written, fails with PRECONDITION_FAILED. Nothing is written when the revision is
 * unchanged. `token` is checked immediately before the write, so a deposed leader does not even
 * try. CONFLICT (S3 409) is passed on for the caller to retry after re-reading.
 */
export async function writeSnapshot(
  store: SnapshotStore,
  next: ServiceSnapshot,
  previous: SnapshotVersion | undefined,
  token: Pick<DutyToken, 'assertValid'>,
): Promise<SnapshotWrite> {
  if (previous?.revision !== undefined && previous.revision === next.revision) {
    return { status: 'unchanged', etag: previous.etag };
  }
  const generation = (previous?.generation ?? 0) + 1;
  const written: ServiceSnapshot = { ...next, generation };
  const body = encodeSnapshot(written);
  const doing = `writing ${SNAPSHOT_KEY} generation ${generation} revision ${next.revision.slice(0, 12)}`;
  token.assertValid(doing);
  try {
    const etag =
      previous === undefined
        ? await store.putIfAbsent(SNAPSHOT_KEY, body)
        : await store.putIfMatch(SNAPSHOT_KEY, body, previous.etag);
    return { status: 'written', snapshot: written, etag };
  } catch (err) {
    if (hasCode(err, 'PRECONDITION_FAILED')) {
      // A retried request whose first attempt landed answers 412 too: our bytes being there
      // means the write is ours (equal bytes are equal content, generation included).
      const landed = await storedEtagIf(store, body);
      if (landed !== undefined) return { status: 'written', snapshot: written, etag: landed };
      const expected = previous === undefined ? 'absent' : `at ETag ${previous.etag}`;
      throw new SnapshotError(
        'PRECONDITION_FAILED',
        `${doing}: the object is no longer ${expected}; another leader wrote it (this one is superseded)`,
        { cause: err, hint: 're-read dns/services.pb if this node still leads' },
      );
    }
    if (hasCode(err, 'CONFLICT')) {
      throw new SnapshotError('CONFLICT', `${doing}: a concurrent write is in progress; retry`, {
        cause: err,
      });
    }
    throw err;
  }
}

async function storedEtagIf(
  store: Pick<SnapshotStore, 'get'>,
  body: Buffer,
): Promise<string | undefined> {
  try {
    const current = await store.get(SNAPSHOT_KEY, { maxBytes: MAX_SNAPSHOT_BYTES });
    return current.body.equals(body) ? current.etag : undefined;
  } catch {
    // The re-read only refines the error; when it fails the 412 stands.
    return undefined;
  }
}

/**
 * The Service identities of a snapshot without its backends: what a node serves in DNS (and
 * programs as fail-closed VIPs) at startup before it hears from the leader, so stale backends
 * are never used.
 */
export function restoreIdentities(snapshot: ServiceSnapshot): SnapshotService[] {
  return snapshot.services.map((s) => ({
    namespace: s.namespace,
    name: s.name,
    vip: s.vip,
    ports: s.ports.map((p) => ({ ...p })),
    backends: [],
  }));
}
