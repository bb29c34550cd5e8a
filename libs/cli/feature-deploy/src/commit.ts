import { PodminError, hasCode } from '@podmin/util-errors';
import {
  MAX_PAYLOAD_BYTES,
  deploymentKey,
  parsePodKey,
  parseServiceKey,
  podPayloadKey,
  sha512Hex,
  sameEntry,
  servicePayloadKey,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEntry,
} from '@podmin/util-desired-state';
import {
  updateIndex as updateDesiredIndex,
  type UpdateIndexOptions,
} from '@podmin/data-access-desired-state';
import type { Backoff, DesiredStateStore } from './desired-state.ports';

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
}

/** Bounds of the compare-and-swap loop. */
export interface CommitOptions {
  maxAttempts?: number;
  backoff?: Backoff;
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
  return updateDesiredIndex(store, mutate, options);
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
  const { changed, attempts } = await updateIndex(
    store,
    (index) => (sameEntry(index[key], entry) ? undefined : withDeployment(index, key, entry)),
    { ...options, beforeFirstWrite: ensurePayloads },
  );
  // The entry was already committed: what it points at must still be intact.
  if (!changed) await ensurePayloads();
  return { key, entry, changed, attempts, repaired };
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
): Promise<{ key: string; attempts: number }> {
  const key = deploymentKey(nodegroup, name);
  const { attempts } = await updateIndex(
    store,
    (index) => {
      if (!(key in index)) {
        throw new PodminError(
          'NOT_FOUND',
          `deleting ${key}: no such deployment in the desired-state index`,
          {
            hint: 'run `podmin list` to see committed deployments',
          },
        );
      }
      return withoutDeployment(index, key);
    },
    options,
  );
  return { key, attempts };
}
