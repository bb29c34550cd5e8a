import { ELECTION_LEASE_MS, ELECTION_POLL_MS } from '@podmin/agent-util-config';
import { FaultBackoff } from '@podmin/agent-util-faults';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import { ElectionError } from './election-error';
import type {
  ElectionTimer,
  LeadershipSource,
  LeadershipTerm,
  LeaseStore,
  MonotonicClock,
  WallClock,
} from './election.ports';
import {
  GO_ZERO_TIME,
  LEADER_RECORD_KEY,
  MAX_LEADER_RECORD_BYTES,
  goTimeFromDate,
  isResigned,
  parseLeaderRecord,
  serializeLeaderRecord,
} from './leader-record';
import type { LeaderRecord } from './leader-record';

/** The election's timings; every participant of a cluster must use the same lease. */
export interface ElectionTiming {
  /** How long a record whose ETag stopped changing stays someone's (s3lect's timeout). */
  leaseMs: number;
  /** Time between rounds (read, then renew, take over or follow). */
  pollMs: number;
  /**
   * A leader stops its duties when `leaseMs − renewMarginMs` have passed since it sent its
   * last successful renew, so it is out before any follower can count the lease as expired
   * (covers timer lateness and clock-rate differences, as client-go's RenewDeadline does).
   */
  renewMarginMs: number;
  /** Base wait before retrying a write S3 answered with 409 (jittered ×0.5–1.5). */
  conflictRetryMs: number;
  /** How many times one write is retried after a 409. */
  conflictRetries: number;
}

/** podmin's production timings: lease 35 s, poll 5 s, leader duties end 25 s after the last renew. */
export const DEFAULT_ELECTION_TIMING: Readonly<ElectionTiming> = Object.freeze({
  leaseMs: ELECTION_LEASE_MS,
  pollMs: ELECTION_POLL_MS,
  renewMarginMs: 10_000,
  conflictRetryMs: 100,
  conflictRetries: 3,
});

/** Who this elector is and how it runs. */
export interface ElectorOptions {
  /** This node's id (`leaderID`); unique in the cluster. */
  id: string;
  /** This node's coordination address (`leaderAddr`, e.g. `[2600::1]:8081`). */
  addr: string;
  /** Object key of the record (default `dns/leader.json`). */
  key?: string;
  /** Timings; unset ones take {@link DEFAULT_ELECTION_TIMING}. */
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

/** Why this node stopped leading. */
export type DeposedReason =
  /** No successful renew within `leaseMs − renewMarginMs` (frozen, slow or bucket lost). */
  | 'renew-deadline'
  /** The record was replaced, deleted, or a renew lost its condition. */
  | 'lost-record'
  /** The elector is stopping (it resigns next). */
  | 'stopping';

/** What the last read found: no record, or a record (unparseable ones have no `record`). */
type Snapshot =
  | { kind: 'absent' }
  | { kind: 'present'; etag: string; body: string; record: LeaderRecord | undefined };

/** This node's current term. */
interface Leading {
  term: number;
  validUntilMs: number;
  controller: AbortController;
  deadline: AbortController;
}

type Listener<T> = (value: T) => void;

/**
 * s3lect-compatible leader election on one object (`dns/leader.json`), stricter than s3lect:
 * a follower counts the lease from the local monotonic time at which it last saw the record's
 * ETag change (never from the record's timestamp, except the zero time meaning "resigned"); a
 * leader's term ends `leaseMs − renewMarginMs` after it sent its last successful renew, by a
 * timer and by a synchronous check, so it stops duties before anyone can take over; 409s are
 * retried; a failed condition on our own write is re-read, and a stored body equal to the one
 * we sent means our write landed. `run(signal)` never rejects; on abort it resigns if it holds
 * the record.
 */
export class Elector implements LeadershipSource {
  private readonly store: LeaseStore;
  private readonly monotonic: MonotonicClock;
  private readonly wall: WallClock;
  private readonly timer: ElectionTimer;
  private readonly log: StructuredLogger | undefined;
  private readonly id: string;
  private readonly addr: string;
  private readonly key: string;
  private readonly timing: Readonly<ElectionTiming>;
  private readonly random: () => number;

  private running = false;
  private terms = 0;
  private leading: Leading | undefined;
  /** The record's ETag as we last wrote or recognised it. */
  private held: { etag: string } | undefined;
  /** The body of our latest write attempt and the monotonic time just before it was sent. */
  private lastSent: { body: string; sentAtMs: number } | undefined;
  /** The ETag last seen and the local time it was first seen (after the read completed). */
  private observed: { etag: string; atMs: number } | undefined;
  private view: LeaderView | undefined;
  private unreadableEtag: string | undefined;
  /** Whether the current round failed to read or write the record (the bucket is failing). */
  private faulted = false;
  private faultError: string | undefined;
  /** Why the last failing round failed, and since when (wall clock) rounds have been failing. */
  private lastFault: { error: string; since: Date } | undefined;
  /** Waits while the bucket fails: up to one poll, so a fault costs no more than health. */
  private readonly backoff: FaultBackoff;

  private readonly electedListeners = new Set<Listener<LeadershipTerm>>();
  private readonly deposedListeners = new Set<Listener<DeposedReason>>();
  private readonly changedListeners = new Set<Listener<LeaderView | undefined>>();

  constructor(deps: ElectorDeps, options: ElectorOptions) {
    this.store = deps.store;
    this.monotonic = deps.monotonic;
    this.wall = deps.wall;
    this.timer = deps.timer;
    this.log = deps.log;
    this.id = options.id;
    this.addr = options.addr;
    this.key = options.key ?? LEADER_RECORD_KEY;
    this.timing = Object.freeze({ ...DEFAULT_ELECTION_TIMING, ...(options.timing ?? {}) });
    this.random = options.random ?? Math.random;
    validate(this.id, this.addr, this.timing);
    this.backoff = new FaultBackoff({ pollMs: this.timing.pollMs, random: this.random });
  }

  /** The timings in force. */
  get settings(): Readonly<ElectionTiming> {
    return this.timing;
  }

  /** True while this node leads and its renew deadline has not passed. */
  isLeader(): boolean {
    return this.leading !== undefined && this.monotonic.nowMs() < this.leading.validUntilMs;
  }

  /** How long this node's duties stay valid without another renew (0 when not leading). */
  validForMs(): number {
    if (this.leading === undefined) return 0;
    return Math.max(0, this.leading.validUntilMs - this.monotonic.nowMs());
  }

  /**
   * Why the election cannot reach its record (`reading dns/leader.json failed since …: …`), while
   * rounds fail; undefined once a round succeeds again.
   */
  fault(): string | undefined {
    const f = this.lastFault;
    return f === undefined
      ? undefined
      : `election: ${this.key} unreachable since ${f.since.toISOString()}: ${f.error}`;
  }

  /** The leader named by the last record read (undefined when absent, resigned or unreadable). */
  leader(): LeaderView | undefined {
    return this.view === undefined ? undefined : { ...this.view };
  }

  /** The current term while leading. */
  currentTerm(): LeadershipTerm | undefined {
    if (!this.isLeader() || this.leading === undefined) return undefined;
    return { term: this.leading.term, signal: this.leading.controller.signal };
  }

  /** True while `term` is this node's current term and its deadline has not passed. */
  holds(term: number): boolean {
    return this.leading?.term === term && this.isLeader();
  }

  /** Calls `listener` whenever this node becomes leader; returns an unsubscribe function. */
  onElected(listener: Listener<LeadershipTerm>): () => void {
    return subscribe(this.electedListeners, listener);
  }

  /** Calls `listener` when this node stops leading (before anyone else can lead). */
  onDeposed(listener: Listener<DeposedReason>): () => void {
    return subscribe(this.deposedListeners, listener);
  }

  /** Calls `listener` when the leader named by the record changes (undefined: none). */
  onLeaderChanged(listener: Listener<LeaderView | undefined>): () => void {
    return subscribe(this.changedListeners, listener);
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
    this.event('info', 'start election', { key: this.key, ...this.timing });
    try {
      while (!signal.aborted) {
        const started = this.monotonic.nowMs();
        this.faulted = false;
        this.faultError = undefined;
        try {
          await this.round(signal);
        } catch (err) {
          this.faulted = true;
          this.faultError = errorText(err);
          this.event('warn', 'election round failed', { error: err });
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
    this.checkDeadline();
    const snapshot = await this.read();
    this.checkDeadline();
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
      this.event('info', 'take over leader record', {
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
    if (this.faulted) {
      const wait = this.backoff.failed();
      const error = this.faultError ?? 'the round failed';
      this.lastFault = { error, since: this.lastFault?.since ?? this.wall.now() };
      if (this.backoff.consecutiveFailures === 1)
        this.event('warn', 'bucket failing; election retries at most once per poll', {
          retryInMs: Math.round(wait),
        });
      return wait;
    }
    if (this.backoff.failing) {
      this.event('info', 'reach leader record again', {
        failedRounds: this.backoff.consecutiveFailures,
      });
      this.backoff.succeeded();
      this.lastFault = undefined;
    }
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
  private async read(): Promise<Snapshot | undefined> {
    let snapshot: Snapshot;
    try {
      const object = await this.store.get(this.key, { maxBytes: MAX_LEADER_RECORD_BYTES });
      const body = object.body.toString('utf8');
      let record: LeaderRecord | undefined;
      try {
        record = parseLeaderRecord(object.body);
        this.unreadableEtag = undefined;
      } catch (err) {
        if (this.unreadableEtag !== object.etag) {
          this.unreadableEtag = object.etag;
          this.event('warn', 'leader record unreadable', { etag: object.etag, error: err });
        }
      }
      snapshot = { kind: 'present', etag: object.etag, body, record };
    } catch (err) {
      if (!hasCode(err, 'OBJECT_NOT_FOUND')) {
        this.faulted = true;
        this.faultError = errorText(err);
        this.event('warn', 'read leader record failed', { error: err });
        return undefined;
      }
      snapshot = { kind: 'absent' };
    }
    this.absorb(snapshot, this.monotonic.nowMs());
    return snapshot;
  }

  private absorb(snapshot: Snapshot, readAtMs: number): void {
    if (snapshot.kind === 'absent') {
      this.observed = undefined;
      if (this.held !== undefined) {
        this.held = undefined;
        this.depose('lost-record');
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
      this.depose('lost-record');
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
    const body = serializeLeaderRecord({
      leaderID: this.id,
      leaderAddr: this.addr,
      lastUpdated: goTimeFromDate(this.wall.now()),
    });
    for (let attempt = 0; ; attempt++) {
      const sentAtMs = this.monotonic.nowMs();
      this.lastSent = { body, sentAtMs };
      try {
        const written =
          etag === undefined
            ? await this.store.putIfAbsent(this.key, body)
            : await this.store.putIfMatch(this.key, body, etag);
        this.confirm(written, sentAtMs);
        return;
      } catch (err) {
        if (hasCode(err, 'CONFLICT') && attempt < this.timing.conflictRetries) {
          this.event('info', 'retry leader record write after conflict', { attempt: attempt + 1 });
          await this.timer.sleep(this.timing.conflictRetryMs * (0.5 + this.random()), signal);
          if (signal.aborted) return;
          continue;
        }
        if (hasCode(err, 'PRECONDITION_FAILED') || hasCode(err, 'CONFLICT')) {
          await this.settleLostCondition(body, err);
          return;
        }
        this.faulted = true;
        this.faultError = errorText(err);
        this.event('warn', 'write leader record failed', { error: err });
        return;
      }
    }
  }

  /** After a failed condition, the stored record decides whether our write landed after all. */
  private async settleLostCondition(body: string, err: unknown): Promise<void> {
    const snapshot = await this.read();
    if (snapshot?.kind === 'present' && snapshot.body === body) {
      this.event('info', 'leader record write landed despite its answer', { error: err });
      return;
    }
    if (this.leading !== undefined) {
      // Unknown (read failed) or lost: either way stepping down is the safe side; a later round
      // recognises our body and resumes if the write did land.
      this.held = undefined;
      this.depose('lost-record');
    }
    this.event('info', 'leader record held by another node', {
      leader: this.view?.id,
      error: err,
    });
  }

  /** A write of ours is stored with `etag`; it was sent at `sentAtMs`. */
  private confirm(etag: string, sentAtMs: number): void {
    const now = this.monotonic.nowMs();
    this.held = { etag };
    this.observed = { etag, atMs: now };
    this.setView({ id: this.id, addr: this.addr });
    const validUntilMs = sentAtMs + this.timing.leaseMs - this.timing.renewMarginMs;
    if (validUntilMs <= now) {
      this.event('warn', 'renewed too late to lead', { tookMs: Math.round(now - sentAtMs) });
      this.depose('renew-deadline');
      return;
    }
    if (this.leading === undefined) {
      const term = ++this.terms;
      this.leading = {
        term,
        validUntilMs,
        controller: new AbortController(),
        deadline: new AbortController(),
      };
      this.event('info', 'become leader', { term, addr: this.addr });
      this.scheduleDeadline(this.leading);
      this.emit(this.electedListeners, {
        term,
        signal: this.leading.controller.signal,
      });
      return;
    }
    this.leading.validUntilMs = validUntilMs;
    this.scheduleDeadline(this.leading);
  }

  private scheduleDeadline(leading: Leading): void {
    leading.deadline.abort();
    const deadline = new AbortController();
    leading.deadline = deadline;
    const wait = async (): Promise<void> => {
      // Timers may fire a little early against performance.now() (libuv's coarse loop time),
      // so wait again until the deadline has really passed.
      while (!deadline.signal.aborted && this.leading === leading) {
        const remaining = leading.validUntilMs - this.monotonic.nowMs();
        if (remaining <= 0) {
          this.checkDeadline();
          return;
        }
        await this.timer.sleep(Math.max(1, remaining), deadline.signal);
      }
    };
    // Nothing in wait() rejects short of a throwing logger; never leave that unhandled.
    void wait().catch(() => undefined);
  }

  private checkDeadline(): void {
    if (this.leading !== undefined && this.monotonic.nowMs() >= this.leading.validUntilMs) {
      this.depose('renew-deadline');
    }
  }

  private depose(reason: DeposedReason): void {
    const leading = this.leading;
    if (leading === undefined) return;
    this.leading = undefined;
    leading.deadline.abort();
    leading.controller.abort(reason);
    const overdueMs = Math.round(this.monotonic.nowMs() - leading.validUntilMs);
    this.event(reason === 'stopping' ? 'info' : 'warn', 'stop leader duties', {
      term: leading.term,
      reason,
      ...(reason === 'renew-deadline' ? { overdueMs } : {}),
    });
    this.emit(this.deposedListeners, reason);
  }

  private async shutdown(): Promise<void> {
    this.depose('stopping');
    const held = this.held;
    if (held === undefined) return;
    const body = serializeLeaderRecord({
      leaderID: this.id,
      leaderAddr: this.addr,
      lastUpdated: GO_ZERO_TIME,
    });
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.putIfMatch(this.key, body, held.etag);
        this.held = undefined;
        this.lastSent = undefined;
        this.setView(undefined);
        this.event('info', 'resign leadership', {});
        return;
      } catch (err) {
        if (hasCode(err, 'CONFLICT') && attempt < this.timing.conflictRetries) {
          await this.timer.sleep(this.timing.conflictRetryMs * (0.5 + this.random()));
          continue;
        }
        // Not fatal: followers take over when the lease runs out.
        this.event('warn', 'resign leadership failed', { error: err });
        return;
      }
    }
  }

  private setView(next: LeaderView | undefined): void {
    const previous = this.view;
    if (previous?.id === next?.id && previous?.addr === next?.addr) return;
    this.view = next;
    this.event('info', 'leader changed', {
      leader: next?.id ?? null,
      leaderAddr: next?.addr ?? null,
    });
    this.emit(this.changedListeners, next === undefined ? undefined : { ...next });
  }

  private emit<T>(listeners: Set<Listener<T>>, value: T): void {
    for (const listener of [...listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.event('error', 'election listener failed', { error: err });
      }
    }
  }

  private event(
    level: 'debug' | 'info' | 'warn' | 'error',
    msg: string,
    fields: Record<string, unknown>,
  ): void {
    this.log?.event(level, msg, { elector: this.id, ...fields });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function subscribe<T>(set: Set<Listener<T>>, listener: Listener<T>): () => void {
  set.add(listener);
  return () => void set.delete(listener);
}

function validate(id: string, addr: string, timing: Readonly<ElectionTiming>): void {
  const problems: string[] = [];
  // Printable ASCII keeps the record byte-identical to what a Go writer would produce.
  if (!/^[\x21-\x7e]{1,253}$/.test(id))
    problems.push('id must be 1–253 printable ASCII characters');
  if (!/^[\x21-\x7e]{0,300}$/.test(addr)) problems.push('addr must be printable ASCII (host:port)');
  const positive = ['leaseMs', 'pollMs', 'renewMarginMs', 'conflictRetryMs'] as const;
  for (const name of positive) {
    if (!Number.isFinite(timing[name]) || timing[name] <= 0) problems.push(`${name} must be > 0`);
  }
  if (!Number.isInteger(timing.conflictRetries) || timing.conflictRetries < 0) {
    problems.push('conflictRetries must be an integer ≥ 0');
  }
  if (timing.renewMarginMs >= timing.leaseMs) problems.push('renewMarginMs must be < leaseMs');
  if (timing.pollMs >= timing.leaseMs - timing.renewMarginMs) {
    problems.push(
      'pollMs must be < leaseMs − renewMarginMs (a leader must renew before its deadline)',
    );
  }
  if (problems.length > 0) {
    throw new ElectionError('CONFIG_INVALID', `configuring the elector: ${problems.join('; ')}`);
  }
}
