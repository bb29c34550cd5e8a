import { PodminError } from '@podmin/util-errors';
import {
  deploymentKey,
  podPayloadKey,
  sameEntry,
  servicePayloadKey,
  withDeployment,
  withoutDeployment,
  type DesiredIndex,
  type IndexEntry,
} from '@podmin/util-desired-state';
import {
  putPayload,
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
