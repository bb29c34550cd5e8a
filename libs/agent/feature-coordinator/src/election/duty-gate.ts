import { ElectionError } from './election-error';
import type { LeadershipSource } from './election.ports';

/** Permission to do leader-only work, valid only while the term it was issued in holds. */
export interface DutyToken {
  /** The leadership term the token belongs to. */
  readonly term: number;
  /** Aborted when the term ends; for cancelling long work (still call `valid()` before writes). */
  readonly signal: AbortSignal;
  /** True while the term holds, judged on the monotonic clock at the moment of the call. */
  valid(): boolean;
  /** Throws PRECONDITION_FAILED (`doing: not the leader`) unless the term still holds. */
  assertValid(doing: string): void;
}

/**
 * Hands leader-only duties (workload CA rotation, external bundle publication, snapshot
 * writes) a token to check before each write. It only stops a deposed leader from starting
 * writes; the writes themselves are fenced by their own conditional writes.
 */
export class DutyGate {
  constructor(private readonly source: LeadershipSource) {}

  /** A token for the current term, or undefined when this node does not lead. */
  current(): DutyToken | undefined {
    const current = this.source.currentTerm();
    if (current === undefined || !this.source.holds(current.term)) return undefined;
    const { term, signal } = current;
    const source = this.source;
    return {
      term,
      signal,
      valid: () => source.holds(term),
      assertValid(doing: string): void {
        if (!source.holds(term)) {
          throw new ElectionError(
            'PRECONDITION_FAILED',
            `${doing}: this node is no longer the leader (term ${term} ended)`,
          );
        }
      },
    };
  }
}
