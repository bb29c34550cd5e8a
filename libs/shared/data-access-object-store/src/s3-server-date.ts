import type { ServerTimeSample } from './object-store.port';

/** Name of the per-command middleware that reads the server's `Date` from each S3 response. */
export const SERVER_DATE_MIDDLEWARE = 'podminServerDate';

/** Where the middleware sits: innermost, so it sees every raw response, errors (304, 412) too. */
export const SERVER_DATE_MIDDLEWARE_OPTIONS = {
  step: 'deserialize',
  priority: 'low',
  name: SERVER_DATE_MIDDLEWARE,
} as const;

/** The SDK's innermost deserialize handler as this middleware uses it. */
export type RawResponseHandler<A, R extends { response: unknown }> = (args: A) => Promise<R>;

/**
 * The deserialize-step middleware: times each attempt on `now` and, when the raw response
 * carries a `Date` header, records the server's time with our clock at the attempt's midpoint
 * (the header has one-second resolution; a round trip is far below the skew worth reporting).
 */
export function serverDateMiddleware(
  now: () => number,
  record: (sample: ServerTimeSample) => void,
) {
  return <A, R extends { response: unknown }>(
      next: RawResponseHandler<A, R>,
    ): RawResponseHandler<A, R> =>
    async (args: A): Promise<R> => {
      const sent = now();
      const result = await next(args);
      const serverMs = dateHeaderOf(result.response);
      if (serverMs !== undefined) record({ serverMs, localMs: (sent + now()) / 2 });
      return result;
    };
}

/** The `Date` header of a raw HTTP response in epoch milliseconds, if it has a valid one. */
export function dateHeaderOf(response: unknown): number | undefined {
  if (typeof response !== 'object' || response === null || !('headers' in response))
    return undefined;
  const { headers } = response;
  if (typeof headers !== 'object' || headers === null) return undefined;
  // Node's HTTP client lower-cases header names; other handlers may not.
  const { date, Date: capitalised } = headers as Record<string, unknown>;
  const value = date ?? capitalised;
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}
