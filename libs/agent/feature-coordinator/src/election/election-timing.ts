import { ELECTION_LEASE_MS, ELECTION_POLL_MS } from '@podmin/agent-util-config';
import { ElectionError } from './election-error';

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

/** Throws CONFIG_INVALID listing every bad value of an elector's identity and timings. */
export function validateElectorSettings(
  id: string,
  addr: string,
  timing: Readonly<ElectionTiming>,
): void {
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
