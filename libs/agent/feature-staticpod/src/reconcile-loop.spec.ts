import { runReconcileLoop } from './reconcile-loop';
import { DegradedPassError } from './reconcile-outcome';
import type { StaticPodReconciler } from './reconciler';

describe('runReconcileLoop', () => {
  it('polls serially, backs off on failure and stops when aborted', async () => {
    const controller = new AbortController();
    const outcomes: Array<{ ok: boolean; retryInMs?: number }> = [];
    let calls = 0;
    const reconciler = {
      reconcileOnce: () => {
        calls++;
        if (calls <= 3) return Promise.reject(new Error(`fail ${calls}`));
        if (calls >= 5) controller.abort();
        return Promise.resolve({ status: 'unchanged' as const });
      },
    } as unknown as StaticPodReconciler;
    await runReconcileLoop(
      reconciler,
      controller.signal,
      {
        intervalMs: 5,
        backoffMs: 2,
        passTimeoutMs: 1000,
        jitter: 0,
        rolloutTickMs: 1,
      },
      (o) => outcomes.push(o.ok ? { ok: true } : { ok: false, retryInMs: o.retryInMs }),
    );
    expect(outcomes).toEqual([
      { ok: false, retryInMs: 2 },
      { ok: false, retryInMs: 4 },
      // Capped at the poll: a sustained fault is probed once per poll, healed within one.
      { ok: false, retryInMs: 5 },
      { ok: true },
      { ok: true },
    ]);
  });

  it('fails a pass that exceeds its deadline', async () => {
    const controller = new AbortController();
    const errors: string[] = [];
    const reconciler = {
      reconcileOnce: () => new Promise(() => undefined),
    } as unknown as StaticPodReconciler;
    await runReconcileLoop(
      reconciler,
      controller.signal,
      {
        intervalMs: 5,
        backoffMs: 1,
        passTimeoutMs: 20,
        jitter: 0,
        rolloutTickMs: 1,
      },
      (o) => {
        if (!o.ok) errors.push(o.error);
        controller.abort();
      },
    );
    expect(errors[0]).toContain('deadline');
  });

  it('cancels a pass at its deadline through its signal and never overlaps the next', async () => {
    const controller = new AbortController();
    const errors: string[] = [];
    const signals: AbortSignal[] = [];
    let running = 0;
    let maxRunning = 0;
    const reconciler = {
      reconcileOnce: (signal: AbortSignal) => {
        signals.push(signal);
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (signals.length >= 3) controller.abort();
        // Honours the signal, but needs a while to unwind (like a write in flight).
        return new Promise<never>((_, reject) => {
          signal.addEventListener('abort', () =>
            setTimeout(() => {
              running--;
              reject(signal.reason as Error);
            }, 30),
          );
        });
      },
    };
    await runReconcileLoop(
      reconciler,
      controller.signal,
      {
        intervalMs: 1,
        backoffMs: 1,
        passTimeoutMs: 10,
        jitter: 0,
        rolloutTickMs: 1,
      },
      (o) => {
        if (!o.ok) errors.push(o.error);
      },
    );
    expect(signals.slice(0, 2).map((s) => s.aborted)).toEqual([true, true]);
    expect(errors[0]).toBe(
      'reconciling static Pods: the pass exceeded its 10 ms deadline and was cancelled',
    );
    expect(maxRunning).toBe(1);
  });

  it('retries a degraded pass at the poll interval, not with backoff', async () => {
    const controller = new AbortController();
    const outcomes: Array<{ retryInMs: number; degraded: boolean }> = [];
    let calls = 0;
    const reconciler = {
      reconcileOnce: () => {
        if (++calls >= 3) controller.abort();
        return Promise.reject(
          calls === 1
            ? new Error('bucket down')
            : new DegradedPassError('OBJECT_NOT_FOUND', 'deployment workers/web keeps its Pod'),
        );
      },
    } as unknown as StaticPodReconciler;
    await runReconcileLoop(
      reconciler,
      controller.signal,
      {
        intervalMs: 7,
        backoffMs: 2,
        passTimeoutMs: 1000,
        jitter: 0,
        rolloutTickMs: 1,
      },
      (o) => {
        if (!o.ok) outcomes.push({ retryInMs: o.retryInMs, degraded: o.degraded });
      },
    );
    expect(outcomes).toEqual([
      { retryInMs: 2, degraded: false },
      { retryInMs: 7, degraded: true },
      { retryInMs: 7, degraded: true },
    ]);
  });
});
