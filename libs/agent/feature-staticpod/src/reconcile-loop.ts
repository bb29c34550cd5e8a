import { FaultBackoff } from '@podmin/agent-util-faults';
import { PodminError } from '@podmin/util-errors';
import { DegradedPassError } from './reconcile-outcome';
import type { StaticPodReconciler } from './reconciler';
import { sleep } from './abortable-sleep';

/** Timing of the reconcile loop. */
export interface LoopTiming {
  /** Poll interval after a successful pass (the spec's bounded polling: 5 s). */
  intervalMs: number;
  /**
   * First retry delay after a failure, doubling up to the poll interval: a failing bucket is
   * probed at most once per poll, and the first poll after it heals finds it.
   */
  backoffMs: number;
  /** Deadline of one pass; when it passes, the pass is cancelled through its AbortSignal. */
  passTimeoutMs: number;
  /** ± fraction of jitter applied to every wait. */
  jitter: number;
  /**
   * While a rollout moves on this node (a Pod to become available, a drain, an admission to
   * wait for), the next pass comes this soon; such passes read the index only at `intervalMs`.
   */
  rolloutTickMs: number;
}

/**
 * The spec's polling: every 5 s, jittered; failures back off from 1 s to the 5 s poll. A pass
 * gets 3 s, well under the poll interval, so a stuck read cannot hold up convergence past one
 * interval.
 */
export const DEFAULT_TIMING: LoopTiming = {
  intervalMs: 5_000,
  backoffMs: 1_000,
  passTimeoutMs: 3_000,
  jitter: 0.1,
  rolloutTickMs: 1_000,
};

/**
 * Reports each pass's outcome (logging). `warning` is a successful pass the operator must hear
 * about; `degraded` a failed pass that kept the node's state and is retried at the poll interval.
 */
export type PassListener = (
  outcome:
    | { ok: true; detail: string; warning?: string }
    | { ok: false; error: string; retryInMs: number; degraded: boolean },
) => void;

/**
 * Runs the reconciler serially until aborted. Each pass gets its own AbortSignal that fires at
 * its deadline; the deadline is reported as a failure at once, and the next pass starts only
 * after the cancelled one has settled, so passes never overlap.
 */
export async function runReconcileLoop(
  reconciler: Pick<StaticPodReconciler, 'reconcileOnce'> &
    Partial<Pick<StaticPodReconciler, 'rolloutActive'>>,
  signal: AbortSignal,
  timing: LoopTiming = DEFAULT_TIMING,
  listener: PassListener = () => undefined,
  random: () => number = Math.random,
): Promise<void> {
  const backoff = new FaultBackoff({
    pollMs: timing.intervalMs,
    initialMs: timing.backoffMs,
    jitter: timing.jitter,
    random,
  });
  const jittered = (ms: number): number => ms * (1 - timing.jitter + 2 * timing.jitter * random());
  let previous: Promise<unknown> = Promise.resolve();
  while (!signal.aborted) {
    await untilSettled(previous, signal);
    if (signal.aborted) break;
    let wait: number;
    const pass = new AbortController();
    const timer = setTimeout(
      () =>
        pass.abort(
          new PodminError(
            'SERVICE_UNAVAILABLE',
            `reconciling static Pods: the pass exceeded its ${timing.passTimeoutMs} ms deadline and was cancelled`,
          ),
        ),
      timing.passTimeoutMs,
    );
    const running = reconciler.reconcileOnce(pass.signal);
    previous = running.catch(() => undefined);
    try {
      const result = await Promise.race([running, rejectOnAbort(pass.signal)]);
      backoff.succeeded();
      const detail =
        result.status === 'published'
          ? `published ${result.changedFiles} changed, ${result.removedFiles} removed`
          : 'unchanged';
      listener(
        result.warning === undefined
          ? { ok: true, detail }
          : { ok: true, detail, warning: result.warning },
      );
      wait = jittered(reconciler.rolloutActive === true ? timing.rolloutTickMs : timing.intervalMs);
    } catch (err) {
      // A degraded pass read the bucket fine: poll again on schedule, so the moment the broken
      // deployment (or the vanished index) is repaired it converges within one interval.
      const degraded = err instanceof DegradedPassError;
      if (degraded) backoff.succeeded();
      wait = degraded ? jittered(timing.intervalMs) : backoff.failed();
      listener({
        ok: false,
        error: err instanceof Error ? err.message : String(err),
        retryInMs: Math.round(wait),
        degraded,
      });
    } finally {
      clearTimeout(timer);
    }
    await sleep(wait, signal);
  }
}

/** Rejects with the signal's reason once it fires (never settles otherwise). */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(signal.reason as Error);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** Waits for `promise` to settle, or for `signal` (shutdown) to fire. */
function untilSettled(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void promise.then(done, done);
  });
}
