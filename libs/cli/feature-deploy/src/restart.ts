import type { Reporter } from '@podmin/cli-util-io';
import { PodminError, hasCode } from '@podmin/util-errors';
import {
  parseDeploymentKey,
  podPayloadKey,
  revisionOf,
  sameEntry,
  withDeployment,
  type IndexEntry,
} from '@podmin/util-desired-state';
import { readPodPayload } from '@podmin/data-access-desired-state';
import { parsePodPayload, stringifyCanonical } from '@podmin/util-manifest';
import { RESTARTED_AT_ANNOTATION } from '@podmin/util-rollout';
import {
  ensurePayload,
  historyWarning,
  updateIndex,
  type CommitOptions,
  type CommitResult,
} from './commit';
import type { DesiredStateStore } from './desired-state.ports';
import { recordHistory } from './history';
import { waitForCommit, type RolloutOptions } from './rollout';
import { committedEntry, type RolloutRequest } from './rollout-state';
import type { StatusStore } from './status';
import type { WaitOutcome } from './wait';

/** What `rollout restart` committed. */
export interface RestartResult extends CommitResult {
  /** The revision committed (the restarted template). */
  revision: string;
  /** The revision it replaced. */
  from: string;
  /** The `podmin.dev/restartedAt` value the new template carries (RFC 3339). */
  restartedAt: string;
}

/**
 * The Pod with `podmin.dev/restartedAt` set to `at` in its metadata annotations (a copy; other
 * annotations kept), as the canonical payload text deploy writes.
 */
export function restartedPodYaml(pod: Record<string, unknown>, at: string): string {
  const copy = structuredClone(pod);
  const metadata = (copy['metadata'] ?? {}) as Record<string, unknown>;
  const annotations = (metadata['annotations'] ?? {}) as Record<string, unknown>;
  copy['metadata'] = {
    ...metadata,
    annotations: { ...annotations, [RESTARTED_AT_ANNOTATION]: at },
  };
  return stringifyCanonical(copy);
}

/**
 * `podmin rollout restart`: commits a new revision of the same template, as `kubectl rollout
 * restart` does: reads the index entry's Pod payload (verified, strictly parsed), sets
 * `podmin.dev/restartedAt` to now, writes it as a new content-addressed payload (create-only,
 * validated by the payload parser first), then replaces only the entry's `pod` by index
 * compare-and-swap, only while the index still holds the entry it read (someone else's deploy
 * in between fails it with CONFLICT and nothing committed), and records the replaced entry in
 * history as a deploy does. Refuses a deployment not in the index.
 */
export async function restartDeployment(
  store: DesiredStateStore,
  request: RolloutRequest,
  options: CommitOptions = {},
): Promise<RestartResult> {
  const { key, entry } = await committedEntry(store, request, 'restarting');
  const doing = `restarting ${key}`;
  let payload;
  try {
    payload = await readPodPayload(store, entry.pod);
  } catch (err) {
    const missing = hasCode(err, 'OBJECT_NOT_FOUND');
    throw new PodminError(
      missing ? 'NOT_FOUND' : 'INVALID_MANIFEST',
      missing
        ? `${doing}: its Pod payload ${entry.pod} is not in the bucket`
        : `${doing}: its Pod payload ${entry.pod} failed verification`,
      {
        cause: err,
        hint: 'nothing was committed; deploy the manifest again to write fresh payloads',
      },
    );
  }
  const now = options.now ?? (() => new Date());
  const restartedAt = now().toISOString();
  const podYaml = restartedPodYaml(payload.pod, restartedAt);
  const podKey = podPayloadKey(request.nodegroup, podYaml);
  // The agents read it with this parser: never commit a payload they would refuse.
  parsePodPayload(podYaml, podKey);
  const replacement: IndexEntry = { ...entry, pod: podKey };
  let current: IndexEntry | undefined = entry;
  const { changed, attempts } = await updateIndex(
    store,
    (index) => {
      current = index[key];
      if (current === undefined || !sameEntry(current, entry)) return undefined;
      return withDeployment(index, key, replacement);
    },
    {
      ...options,
      beforeFirstWrite: async () => {
        await ensurePayload(store, podKey, podYaml);
      },
    },
  );
  if (!changed) {
    const found = current as IndexEntry | undefined;
    throw new PodminError(
      'CONFLICT',
      found === undefined
        ? `${doing}: it was deleted while restarting; nothing was committed`
        : `${doing}: another commit replaced revision ${revisionOf(entry)} with ${revisionOf(found)} while restarting; nothing was committed`,
      { hint: 'run the restart again if it is still needed', fault: 'user' },
    );
  }
  const history = await recordHistory(
    store,
    {
      deployment: key,
      action: 'deploy',
      time: now().toISOString(),
      replaced: entry,
      replacement,
    },
    options,
  );
  return {
    key,
    entry: replacement,
    changed,
    attempts,
    repaired: [],
    previous: entry,
    history,
    revision: revisionOf(replacement),
    from: revisionOf(entry),
    restartedAt,
  };
}

/** The lines `rollout restart` reports: a history warning when one is due, then the outcome. */
export function restartMessages(
  result: RestartResult,
  cluster: string,
): { warning?: string; info: string } {
  const warning = historyWarning(result.key, result.previous, result.history);
  const { nodegroup } = parseDeploymentKey(result.key);
  return {
    ...(warning === undefined ? {} : { warning }),
    info: `Restarted ${result.key}: revision ${result.from} → ${result.revision} (${RESTARTED_AT_ANNOTATION}=${result.restartedAt}) in cluster ${cluster} desired state. Nodes in NodeGroup ${nodegroup} roll it out asynchronously.`,
  };
}

/** What `rollout restart` (and `secret update --restart`) runs on. */
export interface RestartDeps {
  /** Opens the current context's bucket. */
  openBucket(): Promise<{ context: { cluster: string }; store: DesiredStateStore & StatusStore }>;
  /** Where warnings, the outcome and the committed revision go. */
  reporter: Pick<Reporter, 'info' | 'warn' | 'result'>;
  /** Where `--wait` progress lines go. */
  progress: (line: string) => void;
}

/** Options of {@link restartRollout}: the commit's, and the wait's when it should wait. */
export interface RestartRolloutOptions extends CommitOptions {
  /** Wait like `deploy --wait` once committed. */
  waitFor?: Omit<RolloutOptions, keyof CommitOptions>;
}

/**
 * The `rollout restart` use case: {@link restartDeployment}, then what it did (and a history
 * warning when due), the new revision as the result and, with `wait`, the wait `deploy --wait`
 * runs ({@link waitForCommit}: waves, halts, a deadline).
 */
export async function restartRollout(
  deps: RestartDeps,
  request: RolloutRequest,
  options: RestartRolloutOptions = {},
): Promise<RestartResult & { wait?: WaitOutcome }> {
  const { context, store } = await deps.openBucket();
  const result = await restartDeployment(store, request, options);
  const { warning, info } = restartMessages(result, context.cluster);
  if (warning !== undefined) deps.reporter.warn(warning);
  deps.reporter.info(info);
  deps.reporter.result(result.revision);
  if (options.waitFor === undefined) return result;
  const { wait } = await waitForCommit(store, result, deps, {
    ...options,
    ...options.waitFor,
    hint: `run \`podmin status ${request.name} -g ${request.nodegroup}\` to see each node`,
  });
  return { ...result, wait };
}
