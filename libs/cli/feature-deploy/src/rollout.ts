import type { Reporter } from '@podmin/cli-util-io';
import { PodminError } from '@podmin/util-errors';
import {
  sameEntry,
  withDeployment,
  withoutDeployment,
  type IndexEntry,
} from '@podmin/util-desired-state';
import { podRevision } from '@podmin/util-receipts';
import type { Deployment } from '@podmin/util-manifest';
import { historyWarning, updateIndex, type CommitOptions, type CommitResult } from './commit';
import { recordHistory } from './history';
import { deploy, type DeployDeps } from './deploy';
import type { DesiredStateStore } from './desired-state.ports';
import type { StatusStore } from './status';
import { RolloutFailedError, waitForRollout, type WaitOptions, type WaitOutcome } from './wait';

/**
 * Puts back what a failed deploy replaced: re-commits `previous` (or removes the deployment
 * when there was none) by compare-and-swap, only while the index still holds `committed`, so
 * a rollback never overwrites someone else's newer deploy. Resolves to false when it did not.
 */
export type Recommit = (
  key: string,
  committed: IndexEntry,
  previous: IndexEntry | undefined,
) => Promise<boolean>;

/**
 * The default {@link Recommit}: one CAS through `updateIndex`, then, like every commit that
 * replaces an entry, a history record of the one it replaced (`warn` says when it could not be
 * written; the rollback itself stands).
 */
export function recommitPrevious(
  store: DesiredStateStore,
  warn: (message: string) => void = () => undefined,
  options: CommitOptions = {},
): Recommit {
  return async (key, committed, previous) => {
    let ours = true;
    const { changed } = await updateIndex(
      store,
      (index) => {
        ours = sameEntry(index[key], committed);
        if (!ours) return undefined;
        return previous === undefined
          ? withoutDeployment(index, key)
          : withDeployment(index, key, previous);
      },
      options,
    );
    if (ours && changed) {
      const outcome = await recordHistory(
        store,
        {
          deployment: key,
          action: previous === undefined ? 'delete' : 'rollback',
          time: (options.now ?? (() => new Date()))().toISOString(),
          replaced: committed,
          replacement: previous ?? null,
        },
        options,
      );
      const unrecorded = historyWarning(key, committed, outcome);
      if (unrecorded !== undefined) warn(unrecorded);
    }
    return ours;
  };
}

/** What `deploy --wait` runs on, beyond what `deploy` does. */
export interface RolloutDeps extends DeployDeps {
  openBucket(): Promise<{ context: { cluster: string }; store: DesiredStateStore & StatusStore }>;
  reporter: Pick<Reporter, 'info' | 'warn' | 'result'>;
  /** Where progress lines go (stderr; nothing in `-o json`). */
  progress: (line: string) => void;
  /** Re-commits the replaced entry (default {@link recommitPrevious} on the bucket). */
  recommit?: (store: DesiredStateStore) => Recommit;
}

/** Options of {@link deployAndWait}. */
export interface RolloutOptions extends CommitOptions {
  timeoutMs: number;
  rollbackOnFailure?: boolean;
  /** Test knobs of the wait. */
  wait?: Pick<WaitOptions, 'pollMs' | 'now' | 'sleep'>;
}

/** What `deploy --wait` did. */
export interface RolloutResult {
  commit: CommitResult;
  revision: string;
  wait: WaitOutcome;
}

/**
 * `podmin deploy --wait [--rollback-on-failure]`: deploys, then waits until every live node of
 * the NodeGroup reports the new revision Ready ({@link waitForCommit}). Throws a
 * {@link RolloutFailedError} naming every node that is not ready and why (or the node a halted
 * rollout stopped at); resolves only when the new revision is Ready everywhere live.
 */
export async function deployAndWait(
  deps: RolloutDeps,
  options: RolloutOptions,
): Promise<RolloutResult> {
  let prepared: Deployment | undefined;
  let store: (DesiredStateStore & StatusStore) | undefined;
  const commit = await deploy(
    {
      ...deps,
      prepare: async () => (prepared = await deps.prepare()),
      openBucket: async () => {
        const opened = await deps.openBucket();
        store = opened.store;
        return opened;
      },
    },
    options,
  );
  if (!store)
    throw new PodminError('INTERNAL', 'waiting for a rollout: the bucket was never opened');
  return waitForCommit(store, commit, deps, {
    ...options,
    hint: `run \`podmin status ${prepared?.name ?? ''} -g ${prepared?.nodegroup ?? ''}\` to see each node`,
  });
}

/** What {@link waitForCommit} reports through and re-commits with. */
export type CommitWaitDeps = Pick<RolloutDeps, 'reporter' | 'progress' | 'recommit'>;

/**
 * The wait after a commit (`deploy --wait`, `rollout restart --wait`): until every live node of
 * the NodeGroup reports the committed revision Ready, reading the rollout state each poll to
 * show its waves and to stop at once when the rollout to the committed payload is halted. On
 * failure with `rollbackOnFailure` it re-commits the entry the commit replaced (what its winning
 * compare-and-swap replaced), or deletes the deployment when it was new, and waits for that
 * too. Throws a {@link RolloutFailedError} with `hint` on failure.
 */
export async function waitForCommit(
  store: DesiredStateStore & StatusStore,
  commit: CommitResult,
  deps: CommitWaitDeps,
  options: RolloutOptions & { hint: string },
): Promise<RolloutResult> {
  const { hint } = options;
  const revision = podRevision(commit.entry.pod);
  const waitFor = (target: WaitOptions['target'], pod?: string): Promise<WaitOutcome> =>
    waitForRollout(store, {
      key: commit.key,
      target,
      ...(pod === undefined ? {} : { pod }),
      timeoutMs: options.timeoutMs,
      progress: deps.progress,
      warn: (m) => deps.reporter.warn(m),
      ...options.wait,
    });
  const wait = await waitFor({ revision }, commit.entry.pod);
  if (wait.ok) {
    deps.reporter.info(`Ready: ${wait.message}`);
    return { commit, revision, wait };
  }
  if (!options.rollbackOnFailure) {
    throw new RolloutFailedError(`waiting for ${commit.key}: ${wait.message}`, hint);
  }
  // What the winning compare-and-swap replaced: exact even when other deploys raced this one.
  const previous = commit.previous;
  const rollbackTo = previous === undefined ? null : podRevision(previous.pod);
  if (!commit.changed) {
    throw new RolloutFailedError(
      `waiting for ${commit.key}: ${wait.message}; not rolled back: the entry was already committed before this deploy`,
      hint,
    );
  }
  deps.reporter.warn(
    rollbackTo === null
      ? `Rolling back: ${commit.key} was new, so it is deleted (${wait.message})`
      : `Rolling back ${commit.key} to ${rollbackTo} (${wait.message})`,
  );
  const recommit = (
    deps.recommit ??
    ((s: DesiredStateStore) => recommitPrevious(s, (m) => deps.reporter.warn(m), options))
  )(store);
  const committed = await recommit(commit.key, commit.entry, previous);
  if (!committed) {
    throw new RolloutFailedError(
      `waiting for ${commit.key}: ${wait.message}; not rolled back: the index no longer holds this deploy's entry (someone deployed since)`,
      hint,
    );
  }
  const back = await waitFor(
    rollbackTo === null ? { removed: true } : { revision: rollbackTo },
    previous?.pod,
  );
  throw new RolloutFailedError(
    `waiting for ${commit.key}: ${wait.message}; ${rollbackTo === null ? 'deleted it' : `rolled back to ${rollbackTo}`}, ${back.ok ? `and that is done: ${back.message}` : `but that did not finish either: ${back.message}`}`,
    hint,
  );
}
