import { FaultBackoff } from './fault-backoff';

describe('FaultBackoff', () => {
  it('doubles from the first wait up to the poll, and never probes faster than once per poll at the cap', () => {
    const b = new FaultBackoff({ pollMs: 5_000, initialMs: 1_000, random: () => 0.5 });
    expect([b.failed(), b.failed(), b.failed(), b.failed(), b.failed()]).toEqual([
      1_000, 2_000, 4_000, 5_250, 5_250,
    ]);
    const low = new FaultBackoff({ pollMs: 5_000, initialMs: 1_000, random: () => 0 });
    for (let i = 0; i < 3; i++) low.failed();
    // At the cap the jitter only adds: a sustained fault is probed at most once per poll.
    for (let i = 0; i < 100; i++) expect(low.failed()).toBeGreaterThanOrEqual(5_000);
  });

  it('jitters below the cap and stays within one poll plus jitter at the cap', () => {
    const b = new FaultBackoff({ pollMs: 1_000, random: () => 0.999 });
    const waits = Array.from({ length: 50 }, () => b.failed());
    expect(Math.max(...waits)).toBeLessThanOrEqual(1_100);
    expect(waits[0]).toBeCloseTo(200 * 1.0998, 0);
  });

  it('resets on success and reports how long it has failed', () => {
    const b = new FaultBackoff({ pollMs: 1_000, initialMs: 100, random: () => 0.5 });
    expect(b.failing).toBe(false);
    b.failed(10);
    b.failed(20);
    expect(b).toMatchObject({ failing: true, consecutiveFailures: 2, failingSinceMs: 10 });
    b.succeeded();
    expect(b).toMatchObject({ failing: false, consecutiveFailures: 0, failingSinceMs: undefined });
    expect(b.failed()).toBe(100);
    expect(b.regular()).toBe(1_000);
  });

  it('refuses a poll that is not positive', () => {
    expect(() => new FaultBackoff({ pollMs: 0 })).toThrow(/pollMs must be > 0/);
  });
});
