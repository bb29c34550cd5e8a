import type { StaticPodReconciler } from './reconciler';

/** Timing of the reconcile loop. */
export interface LoopTiming {
  /** Poll interval after a successful pass (the spec's bounded polling: 5 s). */
  intervalMs: number;
  /** First retry delay after a failure, doubling up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Deadline of one pass. */
  passTimeoutMs: number;
  /** ± fraction of jitter applied to every wait. */
  jitter: number;
}

/** The spec's polling: every 5 s, jittered; failures back off from 1 s to 30 s; 60 s per pass. */
export const DEFAULT_TIMING: LoopTiming = {
  intervalMs: 5_000,
  backoffMs: 1_000,
  maxBackoffMs: 30_000,
  passTimeoutMs: 60_000,
  jitter: 0.1,
};

/** Reports each pass's outcome (logging). */
export type PassListener = (
  outcome: { ok: true; detail: string } | { ok: false; error: string; retryInMs: number },
) => void;

/** Runs the reconciler serially until aborted: one pass at a time, bounded by a deadline. */
export async function runReconcileLoop(
  reconciler: StaticPodReconciler,
  signal: AbortSignal,
  timing: LoopTiming = DEFAULT_TIMING,
  listener: PassListener = () => undefined,
  random: () => number = Math.random,
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    let wait: number;
    try {
      const result = await withDeadline(reconciler.reconcileOnce(), timing.passTimeoutMs);
      failures = 0;
      listener({
        ok: true,
        detail:
          result.status === 'published'
            ? `published ${result.changedFiles} changed, ${result.removedFiles} removed`
            : 'unchanged',
      });
      wait = timing.intervalMs;
    } catch (err) {
      failures++;
      wait = Math.min(timing.maxBackoffMs, timing.backoffMs * 2 ** (failures - 1));
      listener({
        ok: false,
        error: err instanceof Error ? err.message : String(err),
        retryInMs: wait,
      });
    }
    const jittered = wait * (1 - timing.jitter + 2 * timing.jitter * random());
    await sleep(jittered, signal);
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`reconcile pass exceeded its ${ms} ms deadline`)),
      ms,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
