import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import { ElectionError } from './election-error';
import { ElectionFaults } from './election-faults';
import {
  DEFAULT_ELECTION_TIMING,
  validateElectorSettings,
  type ElectionTiming,
} from './election-timing';
import type {
  ElectionTimer,
  LeadershipSource,
  LeadershipTerm,
  MonotonicClock,
  WallClock,
} from './election.ports';
import {
  GO_ZERO_TIME,
  LEADER_RECORD_KEY,
  goTimeFromDate,
  isResigned,
  serializeLeaderRecord,
  type GoTime,
} from './leader-record';
import { LeaderRecordIo, type RecordRead } from './leader-record-io';
import { LeaderTerms, type DeposedReason } from './leader-term';
import { ListenerSet } from './listener-set';
import type { ElectorDeps, ElectorOptions, LeaderView } from './elector-options';

/**
 * s3lect-compatible leader election on one object (`dns/leader.json`), stricter than s3lect:
 * a follower counts the lease from the local monotonic time at which it last saw the record's
 * ETag change (never from the record's timestamp, except the zero time meaning "resigned"); a
 * leader's term ends `leaseMs − renewMarginMs` after it sent its last successful renew
 * ({@link LeaderTerms}), so it stops duties before anyone can take over; 409s are retried
 * ({@link LeaderRecordIo}); a failed condition on our own write is re-read, and a stored body
 * equal to the one we sent means our write landed. `run(signal)` never rejects; on abort it
 * resigns if it holds the record.
 */
export class Elector implements LeadershipSource {
  private readonly monotonic: MonotonicClock;
  private readonly wall: WallClock;
  private readonly timer: ElectionTimer;
  /** The log, each line tagged with this elector's id. */
  private readonly log: StructuredLogger;
  private readonly id: string;
  private readonly addr: string;
  private readonly key: string;
  private readonly timing: Readonly<ElectionTiming>;
  private readonly io: LeaderRecordIo;
  private readonly terms: LeaderTerms;
  private readonly faults: ElectionFaults;

  private running = false;
  /** The record's ETag as we last wrote or recognised it. */
  private held: { etag: string } | undefined;
  /** The body of our latest write attempt and the monotonic time just before it was sent. */
  private lastSent: { body: string; sentAtMs: number } | undefined;
  /** The ETag last seen and the local time it was first seen (after the read completed). */
  private observed: { etag: string; atMs: number } | undefined;
  private view: LeaderView | undefined;

  private readonly electedListeners = new ListenerSet<LeadershipTerm>();
  private readonly deposedListeners = new ListenerSet<DeposedReason>();
  private readonly changedListeners = new ListenerSet<LeaderView | undefined>();

  constructor(deps: ElectorDeps, options: ElectorOptions) {
    this.monotonic = deps.monotonic;
    this.wall = deps.wall;
    this.timer = deps.timer;
    this.id = options.id;
    this.addr = options.addr;
    this.key = options.key ?? LEADER_RECORD_KEY;
    this.timing = Object.freeze({ ...DEFAULT_ELECTION_TIMING, ...(options.timing ?? {}) });
    const random = options.random ?? Math.random;
    validateElectorSettings(this.id, this.addr, this.timing);
    this.log = {
      event: (level, msg, fields) => deps.log?.event(level, msg, { elector: this.id, ...fields }),
    };
    const { timer, monotonic, timing, log } = this;
    this.io = new LeaderRecordIo({ store: deps.store, key: this.key, timer, timing, random, log });
    this.faults = new ElectionFaults({ wall: this.wall, pollMs: timing.pollMs, random, log });
    this.terms = new LeaderTerms({
      monotonic,
      timer,
      timing,
      addr: this.addr,
      log,
      elected: (term) => this.emit(this.electedListeners, term),
      deposed: (reason) => this.emit(this.deposedListeners, reason),
    });
  }

  /** The timings in force. */
  get settings(): Readonly<ElectionTiming> {
    return this.timing;
  }

  /** True while this node leads and its renew deadline has not passed. */
  isLeader(): boolean {
    return this.terms.isLeader();
  }

  /** How long this node's duties stay valid without another renew (0 when not leading). */
  validForMs(): number {
    return this.terms.validForMs();
  }

  /**
   * Why the election cannot reach its record (`reading dns/leader.json failed since …: …`), while
   * rounds fail; undefined once a round succeeds again.
   */
  fault(): string | undefined {
    return this.faults.describe(this.key);
  }

  /** The leader named by the last record read (undefined when absent, resigned or unreadable). */
  leader(): LeaderView | undefined {
    return this.view === undefined ? undefined : { ...this.view };
  }

  /** The current term while leading. */
  currentTerm(): LeadershipTerm | undefined {
    return this.terms.current();
  }

  /** True while `term` is this node's current term and its deadline has not passed. */
  holds(term: number): boolean {
    return this.terms.holds(term);
  }

  /** Calls `listener` whenever this node becomes leader; returns an unsubscribe function. */
  onElected(listener: (term: LeadershipTerm) => void): () => void {
    return this.electedListeners.add(listener);
  }

  /** Calls `listener` when this node stops leading (before anyone else can lead). */
  onDeposed(listener: (reason: DeposedReason) => void): () => void {
    return this.deposedListeners.add(listener);
  }

  /** Calls `listener` when the leader named by the record changes (undefined: none). */
  onLeaderChanged(listener: (leader: LeaderView | undefined) => void): () => void {
    return this.changedListeners.add(listener);
  }

  /**
   * Runs rounds until `signal` aborts, then ends the term and resigns if this node holds the
   * record. Never rejects: failures are logged and the next round retries.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) {
      throw new ElectionError(
        'INVALID_ARGUMENT',
        `running the elector ${this.id}: already running`,
      );
    }
    this.running = true;
    this.log.event('info', 'start election', { key: this.key, ...this.timing });
    try {
      while (!signal.aborted) {
        const started = this.monotonic.nowMs();
        this.faults.startRound();
        try {
          await this.round(signal);
        } catch (err) {
          this.faults.failed(err);
          this.log.event('warn', 'election round failed', { error: err });
        }
        if (signal.aborted) break;
        await this.timer.sleep(this.nextWaitMs(started), signal);
      }
    } finally {
      await this.shutdown();
      this.running = false;
    }
  }

  private async round(signal: AbortSignal): Promise<void> {
    this.terms.checkDeadline();
    const snapshot = await this.read();
    this.terms.checkDeadline();
    if (snapshot === undefined || signal.aborted) return;
    if (snapshot.kind === 'absent') {
      await this.write(undefined, signal);
      return;
    }
    if (this.held?.etag === snapshot.etag) {
      // Renew even after our own deadline passed: an unchanged ETag proves nobody took over.
      await this.write(snapshot.etag, signal);
      return;
    }
    const resigned = snapshot.record !== undefined && isResigned(snapshot.record);
    const observedAt = this.observed?.atMs ?? this.monotonic.nowMs();
    if (resigned || this.monotonic.nowMs() - observedAt >= this.timing.leaseMs) {
      this.log.event('info', 'take over leader record', {
        previous: snapshot.record?.leaderID,
        resigned,
      });
      await this.write(snapshot.etag, signal);
    }
  }

  /**
   * Wait until the next round: one poll, or sooner when a foreign lease expires earlier. After a
   * failed read or write the backoff decides (at most one poll, never a busy loop): a lease that
   * expired while the bucket was unreachable must not be probed again at once.
   */
  private nextWaitMs(roundStartedMs: number): number {
    const now = this.monotonic.nowMs();
    const backoff = this.faults.waitAfterRound();
    if (backoff !== undefined) return backoff;
    let wait = roundStartedMs + this.timing.pollMs - now;
    if (this.held === undefined && this.observed !== undefined) {
      const expiry = this.observed.atMs + this.timing.leaseMs;
      // +1 ms so the round lands after, not just before, the expiry; an expiry already past
      // was acted on by this round.
      if (expiry >= now) wait = Math.min(wait, expiry - now + 1);
    }
    return Math.max(0, wait);
  }

  /** Reads and absorbs the record; undefined when the read failed (logged). */
  private async read(): Promise<RecordRead | undefined> {
    let snapshot: RecordRead;
    try {
      snapshot = await this.io.read();
    } catch (err) {
      this.faults.failed(err);
      this.log.event('warn', 'read leader record failed', { error: err });
      return undefined;
    }
    this.absorb(snapshot, this.monotonic.nowMs());
    return snapshot;
  }

  private absorb(snapshot: RecordRead, readAtMs: number): void {
    if (snapshot.kind === 'absent') {
      this.observed = undefined;
      if (this.held !== undefined) {
        this.held = undefined;
        this.terms.depose('lost-record');
      }
      this.setView(undefined);
      return;
    }
    if (this.observed?.etag !== snapshot.etag) {
      // The read completed after the write it shows, so the lease counts from here at the earliest.
      this.observed = { etag: snapshot.etag, atMs: readAtMs };
    }
    const sent = this.lastSent;
    if (sent !== undefined && snapshot.body === sent.body) {
      // Our body (with its unique timestamp) is stored: our write landed although its answer
      // was lost or was a 412 from a retried request.
      if (this.held?.etag !== snapshot.etag) this.confirm(snapshot.etag, sent.sentAtMs);
    } else if (this.held !== undefined && this.held.etag !== snapshot.etag) {
      this.held = undefined;
      this.terms.depose('lost-record');
    }
    const record = snapshot.record;
    this.setView(
      record === undefined || isResigned(record)
        ? undefined
        : { id: record.leaderID, addr: record.leaderAddr },
    );
  }

  /** Creates (etag undefined) or replaces the record with a fresh one naming this node. */
  private async write(etag: string | undefined, signal: AbortSignal): Promise<void> {
    const body = this.recordBody(goTimeFromDate(this.wall.now()));
    let sentAtMs = 0;
    try {
      const written = await this.io.put(body, etag, {
        signal,
        beforeAttempt: () => {
          sentAtMs = this.monotonic.nowMs();
          this.lastSent = { body, sentAtMs };
        },
        onRetry: (attempt) =>
          this.log.event('info', 'retry leader record write after conflict', { attempt }),
      });
      if (written !== undefined) this.confirm(written, sentAtMs);
    } catch (err) {
      if (hasCode(err, 'PRECONDITION_FAILED') || hasCode(err, 'CONFLICT')) {
        await this.settleLostCondition(body, err);
        return;
      }
      this.faults.failed(err);
      this.log.event('warn', 'write leader record failed', { error: err });
    }
  }

  /** After a failed condition, the stored record decides whether our write landed after all. */
  private async settleLostCondition(body: string, err: unknown): Promise<void> {
    const snapshot = await this.read();
    if (snapshot?.kind === 'present' && snapshot.body === body) {
      this.log.event('info', 'leader record write landed despite its answer', { error: err });
      return;
    }
    if (this.terms.open) {
      // Unknown (read failed) or lost: either way stepping down is the safe side; a later round
      // recognises our body and resumes if the write did land.
      this.held = undefined;
      this.terms.depose('lost-record');
    }
    this.log.event('info', 'leader record held by another node', {
      leader: this.view?.id,
      error: err,
    });
  }

  /** A write of ours is stored with `etag`; it was sent at `sentAtMs`. */
  private confirm(etag: string, sentAtMs: number): void {
    this.held = { etag };
    this.observed = { etag, atMs: this.monotonic.nowMs() };
    this.setView({ id: this.id, addr: this.addr });
    this.terms.renewed(sentAtMs);
  }

  /** Ends the term and, if this node holds the record, resigns it (zero time: s3lect's "resigned"). */
  private async shutdown(): Promise<void> {
    this.terms.depose('stopping');
    const held = this.held;
    if (held === undefined) return;
    try {
      await this.io.put(this.recordBody(GO_ZERO_TIME), held.etag);
      this.held = undefined;
      this.lastSent = undefined;
      this.setView(undefined);
      this.log.event('info', 'resign leadership', {});
    } catch (err) {
      // Not fatal: followers take over when the lease runs out.
      this.log.event('warn', 'resign leadership failed', { error: err });
    }
  }

  /** The record naming this node, updated at `lastUpdated`. */
  private recordBody(lastUpdated: GoTime): string {
    return serializeLeaderRecord({ leaderID: this.id, leaderAddr: this.addr, lastUpdated });
  }

  private setView(next: LeaderView | undefined): void {
    const previous = this.view;
    if (previous?.id === next?.id && previous?.addr === next?.addr) return;
    this.view = next;
    this.log.event('info', 'leader changed', {
      leader: next?.id ?? null,
      leaderAddr: next?.addr ?? null,
    });
    this.emit(this.changedListeners, next === undefined ? undefined : { ...next });
  }

  private emit<T>(listeners: ListenerSet<T>, value: T): void {
    listeners.emit(value, (err) =>
      this.log.event('error', 'election listener failed', { error: err }),
    );
  }
}
