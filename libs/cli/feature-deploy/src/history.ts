import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  MAX_HISTORY_RECORD_BYTES,
  historyKey,
  historyPrefix,
  parseHistoryRecord,
  serializeHistoryRecord,
  type HistoryRecord,
} from '@podmin/util-desired-state';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { DesiredStateStore } from './desired-state.ports';

/** The object-store methods reading a deployment's history needs. */
export type HistoryReader = Pick<ObjectStore, 'get' | 'list'>;

/** Clock and id source of history records (injected so tests are deterministic). */
export interface HistoryClock {
  /** The time a record is stamped with (default: now). */
  now?: () => Date;
  /** 16 random hex characters naming a record (default: crypto). */
  randomId?: () => string;
}

/** Whether the history record of one replacement was written. */
export type HistoryOutcome =
  { recorded: true; key: string } | { recorded: false; key: string; error: unknown };

// Rounds before giving up on a history record; the index commit has already succeeded.
const RECORD_ATTEMPTS = 3;

/**
 * Writes one history record create-only under a fresh key. It runs after the index commit, so
 * it never throws: a write that still fails after a few rounds comes back as
 * `{ recorded: false }` for the caller to warn about, since the commit itself stands. A key
 * that already exists holding other bytes (a random-id collision) gets a new id; one holding
 * these bytes is an earlier round that landed without its answer.
 */
export async function recordHistory(
  store: Pick<DesiredStateStore, 'get' | 'putIfAbsent'>,
  record: HistoryRecord,
  clock: HistoryClock = {},
): Promise<HistoryOutcome> {
  const randomId = clock.randomId ?? (() => randomBytes(8).toString('hex'));
  const [nodegroup, name] = record.deployment.split('/') as [string, string];
  const body = serializeHistoryRecord(record);
  const keyFor = (): string => historyKey(nodegroup, name, new Date(record.time), randomId());
  let key = keyFor();
  let error: unknown;
  for (let attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
    try {
      await store.putIfAbsent(key, body);
      return { recorded: true, key };
    } catch (err) {
      error = err;
      if (!hasCode(err, 'PRECONDITION_FAILED')) continue;
    }
    try {
      const stored = await store.get(key, { maxBytes: MAX_HISTORY_RECORD_BYTES });
      if (stored.body.toString('utf8') === body) return { recorded: true, key };
    } catch (err) {
      error = err;
    }
    key = keyFor();
  }
  return { recorded: false, key, error };
}

/** One stored history record and its key. */
export interface StoredHistoryRecord {
  key: string;
  record: HistoryRecord;
}

/** Options of {@link readHistory}. */
export interface ReadHistoryOptions {
  /** Record reads in flight at once (default 16). */
  concurrency?: number;
}

/**
 * Lists and strictly parses every history record of one deployment, oldest first (key order is
 * time order). Each read is bounded; a malformed record or a foreign key under the prefix fails
 * the whole read naming it, so nothing acts on a history it cannot trust.
 */
export async function readHistory(
  store: HistoryReader,
  nodegroup: string,
  name: string,
  options: ReadHistoryOptions = {},
): Promise<StoredHistoryRecord[]> {
  const prefix = historyPrefix(nodegroup, name);
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await store.list(prefix, token);
    keys.push(...page.objects.map((o) => o.key));
    token = page.nextToken;
  } while (token !== undefined);
  // A listing of `history/default/web/` never holds another deployment's records; sorting
  // again keeps the order independent of the adapter.
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const limit = pLimit(Math.max(1, options.concurrency ?? 16));
  return Promise.all(
    keys.map((key) =>
      limit(async () => {
        let body: Buffer;
        try {
          body = (await store.get(key, { maxBytes: MAX_HISTORY_RECORD_BYTES })).body;
        } catch (err) {
          if (!hasCode(err, 'OBJECT_TOO_LARGE')) throw err;
          throw new PodminError(
            'INVALID_MANIFEST',
            `reading history record ${key}: it is over ${MAX_HISTORY_RECORD_BYTES} bytes`,
            {
              cause: err,
              hint: 'the object was not written by podmin; restore or remove it, then retry (nothing was changed)',
            },
          );
        }
        return { key, record: parseHistoryRecord(key, body) };
      }),
    ),
  );
}
