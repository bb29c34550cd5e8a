import { performance } from 'node:perf_hooks';
import type { ElectionTimer, MonotonicClock, WallClock } from '../election/election.ports';

/** The process's monotonic clock (`performance.now()`, CLOCK_MONOTONIC underneath). */
export const systemMonotonicClock: MonotonicClock = { nowMs: () => performance.now() };

/** The system wall clock. */
export const systemWallClock: WallClock = { now: () => new Date() };

/** `setTimeout`-based sleeping that ends early, without rejecting, on abort. */
export const systemElectionTimer: ElectionTimer = {
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
    });
  },
};
