import { PodminError, escapeControlCharacters, hasCode } from '@podmin/util-errors';
import { deploymentKey, type IndexEntry } from '@podmin/util-desired-state';
import { entriesOf, jitteredBackoff, readIndex } from '@podmin/data-access-desired-state';
import {
  EMPTY_ROLLOUT_STATE,
  MAX_ROLLOUT_STATE_BYTES,
  ROLLOUT_STATE_KEY,
  newRollout,
  parseRolloutState,
  serializeRolloutState,
  type DeploymentRollout,
  type RolloutState,
} from '@podmin/util-rollout';
import type { Backoff, DesiredStateStore } from './desired-state.ports';

/** The rollout state as read, with the ETag a compare-and-swap writes against (null: absent). */
export interface RolloutStateRead {
  state: RolloutState;
  etag: string | null;
}

/** Reads `dns/rollouts.json` strictly; absent is the empty state. A malformed one throws. */
export async function readRolloutState(
  store: Pick<DesiredStateStore, 'get'>,
): Promise<RolloutStateRead> {
  try {
    const { body, etag } = await store.get(ROLLOUT_STATE_KEY, {
      maxBytes: MAX_ROLLOUT_STATE_BYTES,
    });
    return { state: parseRolloutState(body), etag };
  } catch (err) {
    if (hasCode(err, 'OBJECT_NOT_FOUND')) return { state: EMPTY_ROLLOUT_STATE, etag: null };
    throw err;
  }
}

/**
 * Reads the rollout state for display (`status`, `deploy --wait`): absent is undefined, and so
 * is one that is malformed or too large, which `warn` names instead of failing the command.
 * Access and network trouble still throw.
 */
export async function readRolloutStateForDisplay(
  store: Pick<DesiredStateStore, 'get'>,
  warn: (message: string) => void = () => undefined,
): Promise<RolloutState | undefined> {
  try {
    const { state, etag } = await readRolloutState(store);
    return etag === null ? undefined : state;
  } catch (err) {
    if (!hasCode(err, 'INVALID_MANIFEST') && !hasCode(err, 'OBJECT_TOO_LARGE')) throw err;
    warn(
      `Ignoring the rollout state ${ROLLOUT_STATE_KEY}: ${err instanceof Error ? err.message : String(err)}`,
    );
    return undefined;
  }
}

/** Bounds of the rollout state's compare-and-swap loop. */
export interface RolloutStateUpdateOptions {
  /** Attempts before CONFLICT_RETRIES_EXHAUSTED (default 16). */
  maxAttempts?: number;
  /** Wait after a lost race (default: jittered, 10 ms doubling to 400 ms). */
  backoff?: Backoff;
}

const DEFAULT_STATE_ATTEMPTS = 16;

/**
 * Applies `mutate` to `dns/rollouts.json` by ETag compare-and-swap, like the index update:
 * create-only when absent, if-match otherwise, rereading and reapplying after a lost race
 * (the leader writes admissions and halts to the same object), bounded. `mutate` returns
 * undefined when nothing needs writing. A malformed state is refused: rewriting it would drop
 * what the leader recorded.
 */
export async function updateRolloutState(
  store: Pick<DesiredStateStore, 'get' | 'putIfAbsent' | 'putIfMatch'>,
  mutate: (state: RolloutState) => RolloutState | undefined,
  options: RolloutStateUpdateOptions = {},
): Promise<{ changed: boolean; attempts: number; state: RolloutState }> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_STATE_ATTEMPTS;
  const backoff = options.backoff ?? jitteredBackoff;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let read: RolloutStateRead;
    try {
      read = await readRolloutState(store);
    } catch (err) {
      if (!hasCode(err, 'INVALID_MANIFEST') && !hasCode(err, 'OBJECT_TOO_LARGE')) throw err;
      throw new PodminError('INVALID_MANIFEST', `updating ${ROLLOUT_STATE_KEY}: it is malformed`, {
        cause: err,
        hint: 'nothing was written; the leader agent rewrites it on its next rollout step, then retry',
        fault: 'system',
      });
    }
    const next = mutate(read.state);
    if (next === undefined) return { changed: false, attempts: attempt, state: read.state };
    const body = serializeRolloutState(next);
    try {
      if (read.etag === null) await store.putIfAbsent(ROLLOUT_STATE_KEY, body);
      else await store.putIfMatch(ROLLOUT_STATE_KEY, body, read.etag);
      return { changed: true, attempts: attempt, state: next };
    } catch (err) {
      if (!hasCode(err, 'PRECONDITION_FAILED') && !hasCode(err, 'CONFLICT')) throw err;
      await backoff(attempt);
    }
  }
  throw new PodminError(
    'CONFLICT_RETRIES_EXHAUSTED',
    `updating ${ROLLOUT_STATE_KEY}: another writer changed it ${maxAttempts} times in a row`,
    { hint: 'retry the command; nothing was written' },
  );
}

/** Which deployment a rollout command addresses. */
export interface RolloutRequest {
  nodegroup: string;
  name: string;
}

/** What `rollout pause` or `rollout resume` did. */
export interface RolloutChange {
  /** Index key `<nodegroup>/<name>`. */
  key: string;
  /** False when the state already said so (nothing written). */
  changed: boolean;
  /** The deployment's rollout after the change; undefined when it has none (resume of nothing). */
  rollout: DeploymentRollout | undefined;
  /** The halt `resume` cleared; undefined when it was not halted. */
  clearedHalt?: DeploymentRollout['halted'];
  /** One line saying what it did, for the operator. */
  message: string;
}

/**
 * The index entry of a deployment a rollout command addresses; NOT_FOUND naming it otherwise
 * (`doing` leads the message, e.g. `pausing the rollout of`).
 */
export async function committedEntry(
  store: Pick<DesiredStateStore, 'get'>,
  request: RolloutRequest,
  doing: string,
): Promise<{ key: string; entry: IndexEntry }> {
  const key = deploymentKey(request.nodegroup, request.name);
  const entry = entriesOf(await readIndex(store))[key];
  if (entry === undefined) {
    throw new PodminError(
      'NOT_FOUND',
      `${doing} ${key}: no such deployment in the desired-state index`,
      { hint: 'run `podmin list` to see committed deployments' },
    );
  }
  return { key, entry };
}

/**
 * `podmin rollout pause`: sets `paused` in the deployment's rollout state by compare-and-swap,
 * creating its entry toward the index entry's Pod when it has none, so the leader admits no new
 * node (nodes already admitted carry on). Refuses a deployment not in the index.
 */
export async function pauseRollout(
  store: Pick<DesiredStateStore, 'get' | 'putIfAbsent' | 'putIfMatch'>,
  request: RolloutRequest,
  options: RolloutStateUpdateOptions = {},
): Promise<RolloutChange> {
  const { key, entry } = await committedEntry(store, request, 'pausing the rollout of');
  const { changed, state } = await updateRolloutState(
    store,
    (current) => {
      const existing = current.deployments[key];
      if (existing?.paused === true) return undefined;
      const paused = existing ? { ...existing, paused: true } : newRollout(entry.pod, true);
      return { ...current, deployments: { ...current.deployments, [key]: paused } };
    },
    options,
  );
  const resume = `podmin rollout resume ${request.name} -g ${request.nodegroup}`;
  return {
    key,
    changed,
    rollout: state.deployments[key],
    message: changed
      ? `rollout of ${request.name} paused: nodes already moving finish; no new node moves until \`${resume}\``
      : `rollout of ${request.name} was already paused; resume it with \`${resume}\``,
  };
}

/**
 * `podmin rollout resume`: clears `paused` by compare-and-swap; after a halt it also clears
 * the halt and raises `attempt`, so nodes that failed the target try it again. Refuses a
 * deployment not in the index; unchanged when its rollout is neither paused nor halted.
 */
export async function resumeRollout(
  store: Pick<DesiredStateStore, 'get' | 'putIfAbsent' | 'putIfMatch'>,
  request: RolloutRequest,
  options: RolloutStateUpdateOptions = {},
): Promise<RolloutChange> {
  const { key } = await committedEntry(store, request, 'resuming the rollout of');
  let clearedHalt: DeploymentRollout['halted'] = null;
  const { changed, state } = await updateRolloutState(
    store,
    (current) => {
      const existing = current.deployments[key];
      clearedHalt = existing?.halted ?? null;
      if (existing === undefined || (!existing.paused && existing.halted === null))
        return undefined;
      const resumed: DeploymentRollout = {
        ...existing,
        paused: false,
        ...(existing.halted === null ? {} : { halted: null, attempt: existing.attempt + 1 }),
      };
      return { ...current, deployments: { ...current.deployments, [key]: resumed } };
    },
    options,
  );
  const rollout = state.deployments[key];
  const halt = clearedHalt as DeploymentRollout['halted'];
  let message: string;
  if (!changed) message = `rollout of ${request.name} is not paused or halted: nothing to resume`;
  else if (halt === null) message = `rollout of ${request.name} resumed: nodes move on in waves`;
  else
    message = `rollout of ${request.name} resumed after its halt on node ${escapeControlCharacters(halt.node)} (${escapeControlCharacters(halt.reason)}): attempt ${rollout?.attempt ?? '?'}, nodes that failed try again`;
  return {
    key,
    changed,
    rollout,
    ...(changed && halt !== null ? { clearedHalt: halt } : {}),
    message,
  };
}
