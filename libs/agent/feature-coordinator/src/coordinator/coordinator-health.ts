import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { ReadinessSource, ServerTimeSource } from '../coordinator.ports';
import type { Elector } from '../election/elector';
import { ClockSkewMonitor } from './clock-skew';

/** What the coordinator's health is judged from, and where it goes. */
export interface CoordinatorHealthDeps {
  readonly elector: Pick<Elector, 'fault' | 'isLeader'>;
  readonly readiness: Pick<ReadinessSource, 'health'>;
  readonly log: StructuredLogger;
  /** The bucket's clock, compared with ours on every report (absent: not checked). */
  readonly serverTime?: ServerTimeSource;
  /** Why the leader's last snapshot pass failed (undefined: it did not). */
  readonly lastPassError: () => string | undefined;
  /** Why the last Hello to the leader failed (undefined: it was answered). */
  readonly leaderUnreachable: () => string | undefined;
  /** Receives the verdict when it changes (the process lifecycle's reportHealth). */
  readonly health: (healthy: boolean, detail?: string) => void;
}

/**
 * Health: the leader's last pass, the follower's contact with the leader, and readiness. Notes
 * (no kubelet, a skewed clock) show in the detail without making the process unhealthy.
 */
export class CoordinatorHealth {
  private readonly clockSkew: ClockSkewMonitor | undefined;
  private healthNote = '';

  constructor(private readonly deps: CoordinatorHealthDeps) {
    this.clockSkew =
      deps.serverTime === undefined ? undefined : new ClockSkewMonitor(deps.serverTime, deps.log);
  }

  /** Judges health now and reports it when the verdict or its detail changed. */
  report(): void {
    const { elector } = this.deps;
    const readiness = this.deps.readiness.health();
    const problems: string[] = [];
    const electionFault = elector.fault();
    if (electionFault !== undefined) problems.push(electionFault);
    const passError = this.deps.lastPassError();
    if (elector.isLeader() && passError) problems.push(`snapshot pass failed: ${passError}`);
    const unreachable = this.deps.leaderUnreachable();
    if (!elector.isLeader() && unreachable) problems.push(`leader unreachable: ${unreachable}`);
    if (!readiness.ok) problems.push(`readiness: ${readiness.detail}`);
    const notes = readiness.state === 'no-kubelet' ? [readiness.detail] : [];
    // Checked on every follower round (every node runs them, the leader too) and every pass.
    const skew = this.clockSkew?.check();
    if (skew !== undefined) notes.push(skew);
    const detail = [...problems, ...notes].join('; ');
    if (detail === this.healthNote) return;
    this.healthNote = detail;
    this.deps.health(problems.length === 0, detail || undefined);
  }
}
