import type { ServerTimeSample } from './object-store.port';
import { dateHeaderOf, serverDateMiddleware } from './s3-server-date';

const DATE = 'Tue, 01 Jun 2032 12:00:00 GMT';
const DATE_MS = Date.parse('2032-06-01T12:00:00Z');

/** A clock that advances by `stepMs` on every reading. */
function steppingClock(startMs: number, stepMs: number): () => number {
  let t = startMs - stepMs;
  return () => (t += stepMs);
}

describe('serverDateMiddleware', () => {
  it("records the response's Date with our clock at the attempt's midpoint", async () => {
    const samples: ServerTimeSample[] = [];
    const handler = serverDateMiddleware(steppingClock(DATE_MS + 60_000, 200), (s) =>
      samples.push(s),
    )(() => Promise.resolve({ response: { statusCode: 200, headers: { date: DATE } } }));
    await handler({});
    expect(samples).toEqual([{ serverMs: DATE_MS, localMs: DATE_MS + 60_100 }]);
  });

  it('records error responses too and passes results through unchanged', async () => {
    const samples: ServerTimeSample[] = [];
    const result = { response: { statusCode: 304, headers: { Date: DATE } }, output: 'x' };
    const handler = serverDateMiddleware(
      () => DATE_MS,
      (s) => samples.push(s),
    )(() => Promise.resolve(result));
    await expect(handler({})).resolves.toBe(result);
    expect(samples).toEqual([{ serverMs: DATE_MS, localMs: DATE_MS }]);
  });

  it('records nothing without a valid Date or when the request fails', async () => {
    const samples: ServerTimeSample[] = [];
    const middleware = serverDateMiddleware(
      () => DATE_MS,
      (s) => samples.push(s),
    );
    await middleware(() => Promise.resolve({ response: { headers: {} } }))({});
    await middleware(() => Promise.resolve({ response: { headers: { date: 'soon' } } }))({});
    await expect(middleware(() => Promise.reject(new Error('ECONNREFUSED')))({})).rejects.toThrow(
      'ECONNREFUSED',
    );
    expect(samples).toEqual([]);
  });
});

describe('dateHeaderOf', () => {
  it('reads an IMF-fixdate and ignores anything that is not a response with one', () => {
    expect(dateHeaderOf({ headers: { date: DATE } })).toBe(DATE_MS);
    expect(dateHeaderOf({ headers: { date: 42 } })).toBeUndefined();
    expect(dateHeaderOf({ headers: null })).toBeUndefined();
    expect(dateHeaderOf(undefined)).toBeUndefined();
  });
});
