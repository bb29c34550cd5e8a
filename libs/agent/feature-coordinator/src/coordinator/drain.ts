import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { MonotonicClock } from '../election/election.ports';
import type { Elector } from '../election/elector';
import { errorMessage } from '../error-message';

/** What the drain at shutdown works with. */
export interface DrainDeps {
  /** This node's id. */
  readonly nodeId: string;
  readonly elector: Pick<Elector, 'isLeader' | 'leader'>;
  readonly monotonic: MonotonicClock;
  readonly log: StructuredLogger;
  /** How long the drain waits for the leader's acknowledgement. */
  readonly timeoutMs: number;
  /** A follower's leaving Hello (no endpoints) to the leader at `addr`; rejects unanswered. */
  readonly sayLeaving: (addr: string, timeoutMs: number) => Promise<unknown>;
  /** The leader's next snapshot pass: undefined when it succeeded, else why not. */
  readonly nextPass: (timeoutMs: number) => Promise<string | undefined>;
}

/**
 * The spec's drain at shutdown: tells the leader this node's endpoints are leaving and waits
 * for its acknowledgement, bounded by `timeoutMs`: a follower's leaving Hello answered, or the
 * leader's own next snapshot pass (which leaves them out) written. Never rejects; the outcome
 * is logged as `drain endpoints`.
 */
export async function drainEndpoints(deps: DrainDeps): Promise<void> {
  const started = deps.monotonic.nowMs();
  if (deps.elector.isLeader()) {
    logDrain(deps, deps.nodeId, started, await deps.nextPass(deps.timeoutMs));
    return;
  }
  const leader = deps.elector.leader();
  if (!leader || leader.id === deps.nodeId) return;
  const failure = await deps.sayLeaving(leader.addr, deps.timeoutMs).then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
  logDrain(deps, leader.id, started, failure);
}

function logDrain(
  deps: DrainDeps,
  leader: string,
  startedMs: number,
  failure: string | undefined,
): void {
  if (failure === undefined)
    deps.log.event('info', 'drain endpoints', {
      leader,
      acknowledged: true,
      ms: Math.round(deps.monotonic.nowMs() - startedMs),
    });
  else deps.log.event('warn', 'drain endpoints failed', { leader, error: failure });
}
