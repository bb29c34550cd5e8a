import type { KubeletPod, PodEvent } from '@podmin/agent-data-access-kubelet-pods';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { ElectionTimer, MonotonicClock } from '../election/election.ports';

/** The part of kubelet's Pods API the watch uses (a `KubeletPodsClient` fits). */
export interface PodsApi {
  /** Every Pod kubelet runs. */
  list(timeoutMs?: number): Promise<KubeletPod[]>;
  /** Current Pods as `added`, `initial-sync-complete`, then changes; ends on abort or breakage. */
  watch(signal?: AbortSignal): AsyncGenerator<PodEvent>;
  /** Releases the connection. */
  close(): void;
}

/** Timings of the kubelet readiness watch; every one is configurable. */
export interface ReadinessTiming {
  /** Full `list()` that replaces the set while watching, for events the stream missed. */
  readonly resyncMs: number;
  /** Changes within this window after the first one give a single notification. */
  readonly coalesceMs: number;
  /** How long the last known set is kept after the watch was lost (the leader lease). */
  readonly holdMs: number;
  /** First wait before reconnecting; doubles per failed attempt up to `backoffMaxMs`. */
  readonly backoffInitialMs: number;
  /** Upper bound of the reconnect wait. */
  readonly backoffMaxMs: number;
  /** How often an absent socket is looked for again. */
  readonly socketPollMs: number;
  /** Deadline of one `list()` call. */
  readonly listTimeoutMs: number;
}

/** Defaults: resync every 60 s, 150 ms coalescing, the 35 s lease as hold, backoff 0.5–10 s. */
export const DEFAULT_READINESS_TIMING: ReadinessTiming = Object.freeze({
  resyncMs: 60_000,
  coalesceMs: 150,
  holdMs: 35_000,
  backoffInitialMs: 500,
  backoffMaxMs: 10_000,
  socketPollMs: 2_000,
  listTimeoutMs: 10_000,
});

/** What the kubelet readiness watch runs on: time, logging and how it connects. */
export interface KubeletReadinessDeps {
  readonly monotonic: MonotonicClock;
  readonly timer: ElectionTimer;
  readonly log?: StructuredLogger;
  /** A fresh client per connection attempt (default: `new KubeletPodsClient(socket)`). */
  readonly connect?: (socketPath: string) => PodsApi;
  /** Whether the Pods API socket exists (default: `stat` says it is a socket). */
  readonly socketPresent?: (socketPath: string) => Promise<boolean>;
}

/** Where the kubelet readiness watch looks and how fast it reacts. */
export interface KubeletReadinessOptions {
  /** kubelet's Pods API socket, `<kubelet root>/pods-api/pods-api.sock`. */
  readonly socketPath: string;
  readonly timing?: Partial<ReadinessTiming>;
}
