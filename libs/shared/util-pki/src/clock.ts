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

/** `date` rounded down to a whole second: X.509 validity has one-second resolution. */
export function floorToSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / SECOND_MS) * SECOND_MS);
}
