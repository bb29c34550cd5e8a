import type { DesiredStateReader } from '@podmin/data-access-desired-state';
import { COORDINATOR_DRAIN_TIMEOUT_MS, HELLO_INTERVAL_MS } from '@podmin/agent-util-config';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type {
  CoordinationTransport,
  ReadinessSource,
  ServerTimeSource,
} from '../coordinator.ports';
import type { EndpointTable } from '../coordination/endpoint-table';
import type { LeaseStore, MonotonicClock } from '../election/election.ports';
import type { Elector } from '../election/elector';
import type { SnapshotStore } from '../snapshot/snapshot.ports';

/** The bucket operations the coordinator needs (an ObjectStore fits). */
export type CoordinatorStore = LeaseStore & SnapshotStore & DesiredStateReader;

/** Who this node is and how often the coordinator acts. */
export interface CoordinatorOptions {
  readonly cluster: string;
  readonly nodeId: string;
  readonly nodegroup: string;
  /** The node's canonical Pod /80. */
  readonly prefix: string;
  /** Followers call the leader this often (and sooner when local readiness changes). */
  readonly helloIntervalMs?: number;
  /** The leader re-checks the index and recomputes at least this often. */
  readonly snapshotIntervalMs?: number;
  /** Changes arriving within this window are computed and written once. */
  readonly coalesceMs?: number;
  /** Deadline of one Hello. */
  readonly helloTimeoutMs?: number;
  /** Longest the drain at shutdown waits for the leader's acknowledgement. */
  readonly drainTimeoutMs?: number;
}

/** The coordinator's collaborators. */
export interface CoordinatorDeps {
  readonly store: CoordinatorStore;
  readonly elector: Elector;
  readonly readiness: ReadinessSource;
  /** The followers' reports (the leader's side of Hello). */
  readonly endpoints: EndpointTable;
  readonly transport: CoordinationTransport;
  readonly monotonic: MonotonicClock;
  readonly log: StructuredLogger;
  /** Reports the coordinator's health (the process lifecycle's reportHealth). */
  readonly health: (healthy: boolean, detail?: string) => void;
  /** Wall-clock time, for admission and halt times in `dns/rollouts.json` (default: Date). */
  readonly wall?: () => Date;
  /** The bucket's clock, compared with ours on every health report (absent: not checked). */
  readonly serverTime?: ServerTimeSource;
}

/**
 * The drain's bound at shutdown: a follower's leaving Hello, or a leader's last snapshot pass
 * without its own endpoints. Part of podmin-agent's stop bound (the supervisor's).
 */
export const DRAIN_TIMEOUT_MS = COORDINATOR_DRAIN_TIMEOUT_MS;

/** {@link CoordinatorOptions} with every timing set. */
export type ResolvedCoordinatorOptions = Required<CoordinatorOptions>;

const DEFAULTS = {
  helloIntervalMs: HELLO_INTERVAL_MS,
  snapshotIntervalMs: 5_000,
  coalesceMs: 200,
  helloTimeoutMs: 3_000,
  drainTimeoutMs: DRAIN_TIMEOUT_MS,
};

/** `options` with the production timings where unset. */
export function resolveCoordinatorOptions(options: CoordinatorOptions): ResolvedCoordinatorOptions {
  return { ...DEFAULTS, ...options };
}
