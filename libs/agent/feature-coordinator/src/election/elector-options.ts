import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { ElectionTiming } from './election-timing';
import type { ElectionTimer, LeaseStore, MonotonicClock, WallClock } from './election.ports';

/** Who this elector is and how it runs. */
export interface ElectorOptions {
  /** This node's id (`leaderID`); unique in the cluster. */
  id: string;
  /** This node's coordination address (`leaderAddr`, e.g. `[2600::1]:8081`). */
  addr: string;
  /** Object key of the record (default `dns/leader.json`). */
  key?: string;
  /** Timings; unset ones take `DEFAULT_ELECTION_TIMING`. */
  timing?: Partial<ElectionTiming>;
  /** Random source in [0, 1) for jitter (default Math.random). */
  random?: () => number;
}

/** The elector's collaborators (ports). */
export interface ElectorDeps {
  store: LeaseStore;
  monotonic: MonotonicClock;
  wall: WallClock;
  timer: ElectionTimer;
  /** Structured log of elections, depositions and failures (default: none). */
  log?: StructuredLogger;
}

/** The leader as named by the record last read. */
export interface LeaderView {
  id: string;
  addr: string;
}
