import { JsonLogger } from './json-logger';

function logger(windowMs = 60_000): {
  lines: () => Array<Record<string, unknown>>;
  log: JsonLogger;
} {
  const written: string[] = [];
  const log = new JsonLogger({
    write: (l) => written.push(l),
    now: () => new Date(0),
    service: 'agent-test',
    repeatWindowMs: windowMs,
  });
  return { lines: () => written.map((l) => JSON.parse(l) as Record<string, unknown>), log };
}

describe('JsonLogger folds repeated warnings', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes a warning once per window and then one summary line with the count', () => {
    const { lines, log } = logger();
    for (let i = 0; i < 550; i++)
      log.event('warn', 'read leader record failed', {
        error: new Error(`reading dns/leader.json: connect ETIMEDOUT after ${i} ms`),
        attempt: i,
      });
    expect(lines()).toHaveLength(1);
    jest.advanceTimersByTime(60_000);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatchObject({
      level: 'warn',
      msg: 'read leader record failed',
      repeated: 549,
      repeatedWithinSeconds: 60,
    });
    // Still repeating: folded again, one summary per window.
    for (let i = 0; i < 10; i++)
      log.event('warn', 'read leader record failed', {
        error: 'reading dns/leader.json: connect ETIMEDOUT after 3 ms',
      });
    jest.advanceTimersByTime(60_000);
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toMatchObject({ repeated: 10 });
    // A quiet window forgets the fold: the next occurrence is written whole.
    jest.advanceTimersByTime(60_000);
    log.event('warn', 'read leader record failed', { error: 'again' });
    log.event('warn', 'read leader record failed', { error: 'again' });
    expect(lines()).toHaveLength(4);
    expect(lines()[3]).not.toHaveProperty('repeated');
  });

  it('keeps different causes, messages and levels apart, and never folds info', () => {
    const { lines, log } = logger();
    log.event('warn', 'a', { error: 'bucket unreachable' });
    log.event('warn', 'a', { error: 'access denied' });
    log.event('warn', 'b', { error: 'bucket unreachable' });
    log.event('error', 'a', { error: 'bucket unreachable' });
    log.event('info', 'leader changed', {});
    log.event('info', 'leader changed', {});
    expect(lines()).toHaveLength(6);
  });

  it('writes pending counts on flush, and writes everything when folding is off', () => {
    const { lines, log } = logger();
    log.event('warn', 'x', { error: 'e' });
    log.event('warn', 'x', { error: 'e' });
    log.flushRepeats();
    expect(lines().map((l) => l['repeated'])).toEqual([undefined, 1]);
    const off = logger(0);
    off.log.event('warn', 'x', { error: 'e' });
    off.log.event('warn', 'x', { error: 'e' });
    expect(off.lines()).toHaveLength(2);
  });

  it('writes no stack for expected I/O faults, and keeps it for unexpected errors', () => {
    const { lines, log } = logger(0);
    const io = Object.assign(new Error('connect ECONNREFUSED ::1:9000'), { code: 'ECONNREFUSED' });
    log.event('warn', 'read failed', { error: io });
    log.event('error', 'read failed', { error: io });
    log.event('warn', 'bug', { error: new TypeError('x is undefined') });
    log.event('error', 'bug', { error: new TypeError('x is undefined') });
    const [w, e, wb, eb] = lines() as Array<{ error: Record<string, unknown> }>;
    expect(w!.error).toEqual({ name: 'Error', message: io.message, code: 'ECONNREFUSED' });
    expect(e!.error).toEqual({ name: 'Error', message: io.message, code: 'ECONNREFUSED' });
    expect(wb!.error).toEqual({ name: 'TypeError', message: 'x is undefined' });
    expect(eb!.error['stack']).toEqual(expect.stringContaining('TypeError: x is undefined'));
  });
});
