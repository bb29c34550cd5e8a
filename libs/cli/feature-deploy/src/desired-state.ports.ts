import type { ObjectStore } from '@podmin/data-access-object-store';

/** The object-store methods committing desired state needs (`head` only to repair an oversized payload). */
export type DesiredStateStore = Pick<ObjectStore, 'get' | 'head' | 'putIfAbsent' | 'putIfMatch'>;

/** Waits between conflicting compare-and-swap attempts (the desired-state library's type). */
export type { Backoff } from '@podmin/data-access-desired-state';
/** Jittered exponential backoff: 10 ms doubling to 400 ms, times 0.5–1.5. */
export { jitteredBackoff } from '@podmin/data-access-desired-state';
