import { PodminError, hasCode } from '@podmin/util-errors';
import {
  MAX_PAYLOAD_BYTES,
  deploymentKey,
  parseDeploymentKey,
  parsePodKey,
  parseServiceKey,
  revisionOf,
  podPayloadKey,
  sha512Hex,
  servicePayloadKey,
  type DesiredIndex,
  type HistoryAction,
  type IndexEntry,
} from '@podmin/util-desired-state';
import {
  readPodPayload,
  readServicePayload,
  updateIndex as updateDesiredIndex,
  updateIndexEntry,
  type IndexSigning,
  type UpdateIndexOptions,
} from '@podmin/data-access-desired-state';
import type { Backoff, DesiredStateStore } from './desired-state.ports';
import { recordHistory, type HistoryClock, type HistoryOutcome } from './history';

/** The canonical payloads of one deployment, as produced by manifest extraction. */
export interface DeploymentPayloads {
  name: string;
  nodegroup: string;
  podYaml: string;
  service?: { name: string; namespace: string; yaml: string };
}

/** What a commit did. */
export interface CommitResult {
  key: string;
  entry: IndexEntry;
  /** False when the index already held exactly this entry (nothing written). */
  changed: boolean;
  /** How many index compare-and-swap attempts it took. */
  attempts: number;
  /** Payload keys whose stored object did not match its digest and was rewritten. */
  repaired: string[];
  /** The entry this commit replaced; undefined when the deployment was new or nothing changed. */
  previous?: IndexEntry;
  /** The history record of the replacement; undefined when nothing was replaced. */
  history?: HistoryOutcome;
}

/**
 * Bounds of the compare-and-swap loop, who signs the index it writes, and the clock of the
 * history records it writes.
 */
export interface CommitOptions extends HistoryClock {
  maxAttempts?: number;
  backoff?: Backoff;
  /** Signs every index write as a trusted deployer; without it the index is written unsigned. */
  signing?: IndexSigning;
  /**
   * Awaited before the first write (and before an unchanged entry's payloads are verified):
   * deploy's preflight, started beside the index read so it costs no round of its own there.
   * When it throws, nothing is written.
   */
  beforeWrite?: () => Promise<void>;
}

/**
 * Applies `mutate` to the index by ETag compare-and-swap, rereading and reapplying on
 * conflict, bounded by `maxAttempts` (the desired-state library's loop).
 */
export function updateIndex(
  store: DesiredStateStore,
  mutate: (index: DesiredIndex) => DesiredIndex | undefined,
  options: CommitOptions & Pick<UpdateIndexOptions, 'beforeFirstWrite'> = {},
): Promise<{ changed: boolean; attempts: number }> {
  return updateDesiredIndex(store, mutate, loopOptions(options));
}

/** The compare-and-swap loop's options out of a commit's (the history clock stays here). */
function loopOptions(
  options: CommitOptions & Pick<UpdateIndexOptions, 'beforeFirstWrite'>,
): UpdateIndexOptions {
  const { maxAttempts, backoff, beforeFirstWrite, signing } = options;
  return {
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(backoff === undefined ? {} : { backoff }),
    ...(beforeFirstWrite === undefined ? {} : { beforeFirstWrite }),
    ...(signing === undefined ? {} : { signing }),
  };
}

/** What {@link commitEntryWithHistory} committed and recorded. */
interface EntryCommit {
  changed: boolean;
  attempts: number;
  previous?: IndexEntry;
  history?: HistoryOutcome;
}

/**
 * Sets (or, with `entry` null, removes) one index entry by CAS, then records the entry it
 * replaced as a create-only history record. `previous` is what the winning attempt replaced, so
 * concurrent commits each record their own predecessor and none is lost. The record comes after
 * the commit: a history write that fails leaves the commit standing and is returned, not thrown.
 */
async function commitEntryWithHistory(
  store: DesiredStateStore,
  key: string,
  entry: IndexEntry | null,
  action: HistoryAction,
  options: CommitOptions & Pick<UpdateIndexOptions, 'beforeFirstWrite'>,
  onMissing?: () => never,
): Promise<EntryCommit> {
  const { changed, attempts, previous } = await updateIndexEntry(store, key, entry, {
    ...loopOptions(options),
    ...(onMissing === undefined ? {} : { onMissing }),
  });
  if (!changed || previous === undefined) return { changed, attempts };
  const now = options.now ?? (() => new Date());
  const history = await recordHistory(
    store,
    {
      deployment: key,
      action,
      time: now().toISOString(),
      replaced: previous,
      replacement: entry,
    },
    options,
  );
  return { changed, attempts, previous, history };
}

/**
 * Commits one deployment: reads the index and validates the change (so a rejected deploy
 * writes nothing), makes sure every payload is stored intact, then writes the index entry by
 * CAS. An unchanged entry still has its payloads verified. Success means desired state is
 * committed, not that a Pod runs.
 */
export async function commitDeployment(
  store: DesiredStateStore,
  payloads: DeploymentPayloads,
  options: CommitOptions = {},
): Promise<CommitResult> {
  const key = deploymentKey(payloads.nodegroup, payloads.name);
  const entry: IndexEntry = { pod: podPayloadKey(payloads.nodegroup, payloads.podYaml) };
  if (payloads.service) {
    entry.service = servicePayloadKey(
      payloads.service.namespace,
      payloads.service.name,
      payloads.service.yaml,
    );
  }
  const repaired: string[] = [];
  const ensurePayloads = async (): Promise<void> => {
    if ((await ensurePayload(store, entry.pod, payloads.podYaml)) === 'repaired')
      repaired.push(entry.pod);
    if (payloads.service && entry.service) {
      if ((await ensurePayload(store, entry.service, payloads.service.yaml)) === 'repaired')
        repaired.push(entry.service);
    }
  };
  const { beforeWrite, ...commitOptions } = options;
  const commit = await commitEntryWithHistory(store, key, entry, 'deploy', {
    ...commitOptions,
    beforeFirstWrite: async () => {
      await beforeWrite?.();
      await ensurePayloads();
    },
  });
  // The entry was already committed: what it points at must still be intact.
  if (!commit.changed) {
    await beforeWrite?.();
    await ensurePayloads();
  }
  return { key, entry, repaired, ...commit };
}

/** Options of {@link recommitEntry}. */
export interface RecommitOptions extends CommitOptions {
  /** What the history record names as the cause (default `rollback`). */
  action?: Exclude<HistoryAction, 'delete'>;
}

/**
 * Re-commits an entry that was committed before (a rollback): its payloads are immutable and
 * stay in the bucket, so they are read, verified and strictly parsed first (a missing or
 * damaged payload fails with nothing written), then the entry is set through the same CAS as a
 * deploy and the entry it replaced is recorded in history. Unchanged when already current.
 */
export async function recommitEntry(
  store: DesiredStateStore,
  key: string,
  entry: IndexEntry,
  options: RecommitOptions = {},
): Promise<CommitResult> {
  const { nodegroup } = parseDeploymentKey(key);
  const doing = `re-committing ${key}`;
  if (parsePodKey(entry.pod)?.nodegroup !== nodegroup) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: Pod payload ${entry.pod} is not a payload of NodeGroup ${nodegroup}`,
    );
  }
  const payloads: Array<[string, (k: string) => Promise<unknown>]> = [
    [entry.pod, (k) => readPodPayload(store, k)],
  ];
  if (entry.service !== undefined)
    payloads.push([entry.service, (k) => readServicePayload(store, k)]);
  for (const [payloadKey, read] of payloads) {
    try {
      await read(payloadKey);
    } catch (err) {
      const missing = hasCode(err, 'OBJECT_NOT_FOUND');
      throw new PodminError(
        missing ? 'NOT_FOUND' : 'INVALID_MANIFEST',
        missing
          ? `${doing}: its payload ${payloadKey} is not in the bucket`
          : `${doing}: its payload ${payloadKey} failed verification`,
        {
          cause: err,
          hint: 'nothing was committed; deploy the manifest again to write fresh payloads',
        },
      );
    }
  }
  const commit = await commitEntryWithHistory(
    store,
    key,
    entry,
    options.action ?? 'rollback',
    options,
  );
  return { key, entry, repaired: [], ...commit };
}

/** What {@link ensurePayload} found at a payload's key. */
export type PayloadOutcome = 'written' | 'verified' | 'repaired';

// Lost races on one payload key before giving up; each round is one read and at most one write.
const PAYLOAD_ATTEMPTS = 3;

/**
 * Makes the object at a content-addressed key hold exactly `body`. It reads the key first
 * (which doubles as the existence check, so reusing a payload costs one request) and checks
 * the digest; absent, it is created; corrupt (wrong digest, or larger than any payload), it is
 * replaced by if-match: its key names the content, so rewriting the right bytes is safe.
 */
export async function ensurePayload(
  store: DesiredStateStore,
  key: string,
  body: string,
): Promise<PayloadOutcome> {
  const digest = parsePodKey(key)?.digest ?? parseServiceKey(key)?.digest;
  if (digest === undefined || digest !== sha512Hex(body)) {
    throw new PodminError(
      'INTERNAL',
      `writing ${key}: the key does not name the SHA-512 of the payload`,
    );
  }
  for (let attempt = 1; ; attempt++) {
    let etag: string | undefined;
    try {
      const stored = await store.get(key, { maxBytes: MAX_PAYLOAD_BYTES });
      if (sha512Hex(stored.body) === digest) return 'verified';
      etag = stored.etag;
    } catch (err) {
      if (hasCode(err, 'OBJECT_TOO_LARGE')) etag = (await store.head(key)).etag;
      else if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    }
    try {
      if (etag === undefined) {
        await store.putIfAbsent(key, body);
        return 'written';
      }
      await store.putIfMatch(key, body, etag);
      return 'repaired';
    } catch (err) {
      // Another writer got there first: read again and judge what it left.
      const raced = hasCode(err, 'PRECONDITION_FAILED') || hasCode(err, 'CONFLICT');
      if (!raced || attempt >= PAYLOAD_ATTEMPTS) throw err;
    }
  }
}

/** Removes one deployment's index entry (payloads stay; they are immutable and unreferenced). */
export async function deleteDeployment(
  store: DesiredStateStore,
  nodegroup: string,
  name: string,
  options: CommitOptions = {},
): Promise<DeleteResult> {
  const key = deploymentKey(nodegroup, name);
  const { attempts, previous, history } = await commitEntryWithHistory(
    store,
    key,
    null,
    'delete',
    options,
    () => {
      throw new PodminError(
        'NOT_FOUND',
        `deleting ${key}: no such deployment in the desired-state index`,
        {
          hint: 'run `podmin list` to see committed deployments',
        },
      );
    },
  );
  return {
    key,
    attempts,
    previous: previous as IndexEntry,
    revision: revisionOf(previous as IndexEntry),
    ...(history === undefined ? {} : { history }),
  };
}

/** What a delete did. */
export interface DeleteResult {
  key: string;
  attempts: number;
  /** The entry the delete removed. */
  previous: IndexEntry;
  /** The revision of the removed entry (`podmin history`'s REVISION). */
  revision: string;
  /** The history record of the removed entry. */
  history?: HistoryOutcome;
}

/**
 * A warning naming what a commit could not record in history, or undefined when it was
 * recorded (or nothing was replaced). The commit itself succeeded either way.
 */
export function historyWarning(
  key: string,
  previous: IndexEntry | undefined,
  history: HistoryOutcome | undefined,
): string | undefined {
  if (previous === undefined || history === undefined || history.recorded) return undefined;
  const reason = history.error instanceof Error ? history.error.message : String(history.error);
  return `The change to ${key} is committed, but its history record ${history.key} was not written (${reason}): \`podmin history\` will not show when revision ${revisionOf(previous)} (${previous.pod}) was replaced`;
}
