import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { ElectionTimer, LeadershipTerm, MonotonicClock } from './election.ports';
import type { ElectionTiming } from './election-timing';

/** Why this node stopped leading. */
export type DeposedReason =
  /** No successful renew within `leaseMs − renewMarginMs` (frozen, slow or bucket lost). */
  | 'renew-deadline'
  /** The record was replaced, deleted, or a renew lost its condition. */
  | 'lost-record'
  /** The elector is stopping (it resigns next). */
  | 'stopping';

/** What a {@link LeaderTerms} runs on and whom it tells. */
export interface LeaderTermsDeps {
  readonly monotonic: MonotonicClock;
  readonly timer: ElectionTimer;
  readonly timing: Pick<ElectionTiming, 'leaseMs' | 'renewMarginMs'>;
  /** This node's coordination address, for the log. */
  readonly addr: string;
  readonly log: StructuredLogger;
  /** A term began. */
  readonly elected: (term: LeadershipTerm) => void;
  /** The term ended, before anyone else can lead. */
  readonly deposed: (reason: DeposedReason) => void;
}

/** This node's current term. */
interface Leading {
  term: number;
  validUntilMs: number;
  controller: AbortController;
  deadline: AbortController;
}

/**
 * This node's terms of leadership and their fencing: a term is valid until
 * `leaseMs − renewMarginMs` after the last successful renew was sent, and ends at that deadline
 * by a timer and by a synchronous check, so duties stop before any follower can count the
 * lease as expired. Each term's signal aborts when it ends.
 */
export class LeaderTerms {
  private terms = 0;
  private leading: Leading | undefined;

  constructor(private readonly deps: LeaderTermsDeps) {}

  /** True while a term is open (its deadline may have passed; see {@link isLeader}). */
  get open(): boolean {
    return this.leading !== undefined;
  }

  /** True while this node leads and its renew deadline has not passed. */
  isLeader(): boolean {
    return this.leading !== undefined && this.deps.monotonic.nowMs() < this.leading.validUntilMs;
  }

  /** How long this node's duties stay valid without another renew (0 when not leading). */
  validForMs(): number {
    if (this.leading === undefined) return 0;
    return Math.max(0, this.leading.validUntilMs - this.deps.monotonic.nowMs());
  }

  /** The current term while leading. */
  current(): LeadershipTerm | undefined {
    if (!this.isLeader() || this.leading === undefined) return undefined;
    return { term: this.leading.term, signal: this.leading.controller.signal };
  }

  /** True while `term` is this node's current term and its deadline has not passed. */
  holds(term: number): boolean {
    return this.leading?.term === term && this.isLeader();
  }

  /**
   * A write of ours sent at `sentAtMs` is stored: opens a term or moves its deadline; a renew
   * that arrives past the deadline it would set ends the term instead.
   */
  renewed(sentAtMs: number): void {
    const now = this.deps.monotonic.nowMs();
    const { leaseMs, renewMarginMs } = this.deps.timing;
    const validUntilMs = sentAtMs + leaseMs - renewMarginMs;
    if (validUntilMs <= now) {
      this.deps.log.event('warn', 'renewed too late to lead', {
        tookMs: Math.round(now - sentAtMs),
      });
      this.depose('renew-deadline');
      return;
    }
    if (this.leading !== undefined) {
      this.leading.validUntilMs = validUntilMs;
      this.scheduleDeadline(this.leading);
      return;
    }
    const term = ++this.terms;
    this.leading = {
      term,
      validUntilMs,
      controller: new AbortController(),
      deadline: new AbortController(),
    };
    this.deps.log.event('info', 'become leader', { term, addr: this.deps.addr });
    this.scheduleDeadline(this.leading);
    this.deps.elected({ term, signal: this.leading.controller.signal });
  }

  /** Ends the term now when its deadline has passed. */
  checkDeadline(): void {
    if (this.leading !== undefined && this.deps.monotonic.nowMs() >= this.leading.validUntilMs) {
      this.depose('renew-deadline');
    }
  }

  /** Ends the term (if any): aborts its signal, logs and tells the listeners. */
  depose(reason: DeposedReason): void {
    const leading = this.leading;
    if (leading === undefined) return;
    this.leading = undefined;
    leading.deadline.abort();
    leading.controller.abort(reason);
    const overdueMs = Math.round(this.deps.monotonic.nowMs() - leading.validUntilMs);
    this.deps.log.event(reason === 'stopping' ? 'info' : 'warn', 'stop leader duties', {
      term: leading.term,
      reason,
      ...(reason === 'renew-deadline' ? { overdueMs } : {}),
    });
    this.deps.deposed(reason);
  }

  private scheduleDeadline(leading: Leading): void {
    leading.deadline.abort();
    const deadline = new AbortController();
    leading.deadline = deadline;
    const wait = async (): Promise<void> => {
      // Timers may fire a little early against performance.now() (libuv's coarse loop time),
      // so wait again until the deadline has really passed.
      while (!deadline.signal.aborted && this.leading === leading) {
        const remaining = leading.validUntilMs - this.deps.monotonic.nowMs();
        if (remaining <= 0) {
          this.checkDeadline();
          return;
        }
        await this.deps.timer.sleep(Math.max(1, remaining), deadline.signal);
      }
    };
    // Nothing in wait() rejects short of a throwing logger; never leave that unhandled.
    void wait().catch(() => undefined);
  }
}
