import { hasCode, PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  MAX_INDEX_BYTES,
  deploymentKey,
  parseIndex,
  podPayloadKey,
  sameEntry,
  serializeIndex,
  servicePayloadKey,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEntry,
} from '@podmin/util-desired-state';
import { jitteredBackoff, type Backoff, type DesiredStateStore } from './desired-state.ports';

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
}

/** Bounds of the compare-and-swap loop. */
export interface CommitOptions {
  maxAttempts?: number;
  backoff?: Backoff;
}

const DEFAULT_MAX_ATTEMPTS = 64;

/** The index and the ETag it was read at (undefined when there is no index yet). */
interface IndexSnapshot {
  index: DesiredIndex;
  etag: string | undefined;
}

async function readIndex(store: DesiredStateStore): Promise<IndexSnapshot> {
  try {
    const { body, etag } = await store.get(INDEX_KEY, { maxBytes: MAX_INDEX_BYTES });
    return { index: parseIndex(body), etag };
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return { index: {}, etag: undefined };
    throw err;
  }
}

/** Writes a content-addressed payload; an existing object with that digest is reused. */
async function putPayload(store: DesiredStateStore, key: string, body: string): Promise<void> {
  try {
    await store.putIfAbsent(key, body);
  } catch (err) {
    if (!hasCode(err, 'PRECONDITION_FAILED')) throw err;
  }
}

/**
 * Applies `mutate` to the index by ETag compare-and-swap, rereading and reapplying on
 * conflict, bounded by `maxAttempts`. `mutate` returns undefined when nothing needs writing.
 */
export async function updateIndex(
  store: DesiredStateStore,
  mutate: (index: DesiredIndex) => DesiredIndex | undefined,
  options: CommitOptions & { beforeFirstWrite?: () => Promise<void> } = {},
): Promise<{ changed: boolean; attempts: number }> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = options.backoff ?? jitteredBackoff;
  let prepared = options.beforeFirstWrite === undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const { index, etag } = await readIndex(store);
    const next = mutate(index);
    if (next === undefined) return { changed: false, attempts: attempt };
    if (!prepared) {
      await options.beforeFirstWrite?.();
      prepared = true;
    }
    const body = serializeIndex(next);
    try {
      if (etag === undefined) await store.putIfAbsent(INDEX_KEY, body);
      else await store.putIfMatch(INDEX_KEY, body, etag);
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

/**
 * Commits one deployment: reads the index and validates the change (so a rejected deploy
 * writes nothing), writes payloads create-only, then the index entry by CAS.
 * Success means desired state is committed, not that a Pod runs.
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
  const writePayloads = async (): Promise<void> => {
    await putPayload(store, entry.pod, payloads.podYaml);
    if (payloads.service && entry.service)
      await putPayload(store, entry.service, payloads.service.yaml);
  };
  const { changed, attempts } = await updateIndex(
    store,
    (index) => (sameEntry(index[key], entry) ? undefined : withDeployment(index, key, entry)),
    { ...options, beforeFirstWrite: writePayloads },
  );
  return { key, entry, changed, attempts };
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
