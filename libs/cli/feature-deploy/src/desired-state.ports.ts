import type { ObjectStore } from '@podmin/data-access-object-store';

/** The object-store methods committing desired state needs. */
export type DesiredStateStore = Pick<ObjectStore, 'get' | 'putIfAbsent' | 'putIfMatch'>;

/** Waits between conflicting compare-and-swap attempts (injected so tests need not sleep). */
export type Backoff = (attempt: number) => Promise<void>;

/** Jittered exponential backoff: 10 ms doubling to 400 ms, times 0.5–1.5. */
export const jitteredBackoff: Backoff = (attempt) =>
  new Promise((resolve) =>
    setTimeout(resolve, Math.min(400, 10 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random())),
  );
