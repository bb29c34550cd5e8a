import { coordinator } from '@podmin/agent-contracts';
import { ServicesWatchLoop, type ServicesWatch } from './services-watch';

const NONE = coordinator.ServicesView_Source.SOURCE_UNSPECIFIED;

/** A coordinator that fails its first `failures` polls, then answers each poll at once. */
class ScriptedWatch implements ServicesWatch {
  readonly calls: Array<{
    at: number;
    request: coordinator.WatchServicesRequest;
    timeoutMs: number;
  }> = [];
  constructor(private failures: number) {}

  watchServices(
    request: coordinator.WatchServicesRequest,
    options: { timeoutMs: number },
  ): Promise<coordinator.ServicesView> {
    this.calls.push({ at: Date.now(), request, timeoutMs: options.timeoutMs });
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('connect ENOENT'));
    }
    return new Promise((resolve) =>
      setTimeout(() => resolve({ snapshot: undefined, source: NONE, unchanged: true }), 5),
    );
  }
}

describe('ServicesWatchLoop', () => {
  it('reports an outage once, retries with doubling waits up to the cap, and reports its end', async () => {
    const watch = new ScriptedWatch(4);
    const events: string[] = [];
    const loop = new ServicesWatchLoop(
      watch,
      {
        identitiesOnly: true,
        knownRevision: () => 'r1',
        onView: () => {
          events.push('view');
          if (events.filter((e) => e === 'view').length === 2) loop.stop();
        },
        onUnreachable: (err) => events.push(`unreachable: ${(err as Error).message}`),
        onReachable: () => events.push('reachable'),
      },
      {
        waitMs: 100,
        deadlineMarginMs: 7,
        initialBackoffMs: 20,
        maxBackoffMs: 60,
        random: () => 0.5,
      },
    );
    loop.start();
    await loop.stopped();

    expect(events).toEqual(['unreachable: connect ENOENT', 'reachable', 'view', 'view']);
    expect(watch.calls[0]).toMatchObject({
      request: { knownRevision: 'r1', waitMs: 100, identitiesOnly: true },
      timeoutMs: 107,
    });
    const gaps = watch.calls.slice(1, 5).map((c, i) => c.at - (watch.calls[i]?.at ?? 0));
    // 20, 40, then the cap 60 (+ up to 10% jitter at the cap); timers may run late, not early.
    expect(gaps[0]).toBeGreaterThanOrEqual(19);
    expect(gaps[1]).toBeGreaterThanOrEqual(39);
    expect(gaps[2]).toBeGreaterThanOrEqual(59);
    expect(gaps[3]).toBeGreaterThanOrEqual(59);
    expect(gaps[3]).toBeLessThan(200);
  });

  it('ends a retry wait at once when stopped', async () => {
    const watch = new ScriptedWatch(1);
    const loop = new ServicesWatchLoop(
      watch,
      {
        identitiesOnly: false,
        knownRevision: () => '',
        onView: () => undefined,
        onUnreachable: () => loop.stop(),
        onReachable: () => undefined,
      },
      { initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    const started = Date.now();
    loop.start();
    await loop.stopped();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(watch.calls).toHaveLength(1);
    expect(loop.active).toBe(false);
  });
});
