/**
 * A loop's wake-up: `wait` sleeps up to `ms`, but a kick (a change worth acting on) shortens it
 * to `coalesceMs`, so a burst of changes is acted on once. A kick while the loop is busy is
 * remembered for its next wait.
 */
export class Wakeup {
  private wake: (() => void) | undefined;
  private pending = false;

  constructor(private readonly coalesceMs: number) {}

  /** Asks the loop to act soon. */
  kick(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  /** Waits `ms`, or `coalesceMs` after a kick, or until `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      let timer: NodeJS.Timeout | undefined;
      let kicked = false;
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const shorten = (): void => {
        if (kicked) return;
        kicked = true;
        if (timer) clearTimeout(timer);
        timer = setTimeout(done, this.coalesceMs);
      };
      timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.wake = shorten;
      if (this.pending) {
        this.pending = false;
        shorten();
      }
    });
  }
}
