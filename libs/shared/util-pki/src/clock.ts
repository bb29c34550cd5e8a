/** The source of the current time; injected everywhere so tests can step through a year. */
export interface Clock {
  /** The current instant. */
  now(): Date;
}

/** The operating system's wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** One second, minute, hour and day in milliseconds. */
export const SECOND_MS = 1000;
/** One minute in milliseconds. */
export const MINUTE_MS = 60 * SECOND_MS;
/** One hour in milliseconds. */
export const HOUR_MS = 60 * MINUTE_MS;
/** One day in milliseconds. */
export const DAY_MS = 24 * HOUR_MS;

/**
 * How far before its issue every certificate podmin issues becomes valid (its notBefore is
 * the issue time less this margin; its notAfter stays the issue time plus its lifetime). A
 * verifier whose clock runs behind the issuer's would otherwise refuse a fresh leaf as "not yet
 * valid" until its own clock caught up: measured with one node 60 s off, mTLS failed for about
 * the skew after every node-leaf issue. Five minutes covers any clock that NTP keeps roughly
 * right (it is Kerberos' default tolerance and the backdate Kubernetes' and cfssl's signers use),
 * stays far below the shortest lifetime issued (24 h), and is ten times the 30 s at which the
 * agent reports a skewed clock, so an operator is warned long before certificates are refused.
 */
export const CLOCK_SKEW_MARGIN_MS = 5 * MINUTE_MS;

/** `date` rounded down to a whole second: X.509 validity has one-second resolution. */
export function floorToSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / SECOND_MS) * SECOND_MS);
}

/**
 * The notBefore of a certificate issued at `issuedAt`: the issue time to the second, less
 * {@link CLOCK_SKEW_MARGIN_MS}.
 */
export function backdatedNotBefore(issuedAt: Date): Date {
  return new Date(floorToSecond(issuedAt).getTime() - CLOCK_SKEW_MARGIN_MS);
}
