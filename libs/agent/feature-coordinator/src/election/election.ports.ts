import type { GetOptions, StoredObject } from '@podmin/data-access-object-store';

/**
 * The conditional object operations the elector needs on the cluster bucket (an `ObjectStore`
 * fits). Errors are PodminErrors: OBJECT_NOT_FOUND, PRECONDITION_FAILED, CONFLICT (S3's 409,
 * retry), anything else means the bucket cannot be used right now.
 */
export interface LeaseStore {
  /** Reads the record with its ETag; OBJECT_NOT_FOUND when absent. */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Creates the record only if absent (`If-None-Match: *`); PRECONDITION_FAILED when it exists. */
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  /** Replaces the record only if its ETag is still `etag` (`If-Match`); PRECONDITION_FAILED otherwise. */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}

/** Local monotonic time: never jumps with the wall clock, keeps counting while the process is stopped. */
export interface MonotonicClock {
  /** Milliseconds from an arbitrary origin. */
  nowMs(): number;
}

/** Wall-clock time, used only for the record's `lastUpdated` that Go readers compare. */
export interface WallClock {
  /** The current time. */
  now(): Date;
}

/** Waiting, on the same time base as the {@link MonotonicClock}. */
export interface ElectionTimer {
  /** Resolves after `ms`, or at once (never rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** One continuous stretch of this node's leadership. */
export interface LeadershipTerm {
  /** Increases with every election of this process; never reused. */
  readonly term: number;
  /** Aborted when the term ends (the deadline check is synchronous; see `holds`). */
  readonly signal: AbortSignal;
}

/** What the duty gate asks the elector (an `Elector` fits). */
export interface LeadershipSource {
  /** The current term while this node leads, else undefined. */
  currentTerm(): LeadershipTerm | undefined;
  /** True while `term` is current and its renew deadline has not passed on the monotonic clock. */
  holds(term: number): boolean;
}
