import { FaultBackoff } from '@podmin/agent-util-faults';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { errorMessage } from '../error-message';
import type { WallClock } from './election.ports';

/** What {@link ElectionFaults} runs on. */
export interface ElectionFaultsDeps {
  readonly wall: WallClock;
  /** The election's poll: the longest wait after a failed round. */
  readonly pollMs: number;
  /** Random source in [0, 1) for the backoff's jitter. */
  readonly random: () => number;
  readonly log: StructuredLogger;
}

/**
 * Whether the election's rounds reach their record: a round that failed to read or write it
 * makes the next wait a backoff of at most one poll (never a busy loop, so a fault costs no
 * more than health), and the failure is kept, with since when rounds fail, for health.
 */
export class ElectionFaults {
  /** Whether the current round failed to read or write the record (the bucket is failing). */
  private faulted = false;
  private faultError: string | undefined;
  /** Why the last failing round failed, and since when (wall clock) rounds have been failing. */
  private lastFault: { error: string; since: Date } | undefined;
  private readonly backoff: FaultBackoff;

  constructor(private readonly deps: ElectionFaultsDeps) {
    this.backoff = new FaultBackoff({ pollMs: deps.pollMs, random: deps.random });
  }

  /** A round begins: nothing has failed in it yet. */
  startRound(): void {
    this.faulted = false;
    this.faultError = undefined;
  }

  /** The current round failed to read or write the record with `err`. */
  failed(err: unknown): void {
    this.faulted = true;
    this.faultError = errorMessage(err);
  }

  /** Why rounds cannot reach `key`, while they fail; undefined once one succeeds again. */
  describe(key: string): string | undefined {
    const f = this.lastFault;
    return f === undefined
      ? undefined
      : `election: ${key} unreachable since ${f.since.toISOString()}: ${f.error}`;
  }

  /**
   * After a round: the backoff wait when it failed (the first failure logged), undefined when
   * it succeeded (a recovery from failing rounds logged).
   */
  waitAfterRound(): number | undefined {
    if (this.faulted) {
      const wait = this.backoff.failed();
      const error = this.faultError ?? 'the round failed';
      this.lastFault = { error, since: this.lastFault?.since ?? this.deps.wall.now() };
      if (this.backoff.consecutiveFailures === 1)
        this.deps.log.event('warn', 'bucket failing; election retries at most once per poll', {
          retryInMs: Math.round(wait),
        });
      return wait;
    }
    if (this.backoff.failing) {
      this.deps.log.event('info', 'reach leader record again', {
        failedRounds: this.backoff.consecutiveFailures,
      });
      this.backoff.succeeded();
      this.lastFault = undefined;
    }
    return undefined;
  }
}
