import type { ElectionTimer, MonotonicClock, WallClock } from '../election/election.ports';

interface Sleeper {
  dueMs: number;
  seq: number;
  owner: FakeProcess;
  resolve: () => void;
}

/** One simulated process on a {@link FakeTime}: its clocks and timer, which can be frozen (SIGSTOP). */
export interface FakeProcess {
  readonly name: string;
  readonly monotonic: MonotonicClock;
  readonly wall: WallClock;
  readonly timer: ElectionTimer;
  /** While true, this process's timers do not fire (its clock keeps counting, as CLOCK_MONOTONIC does). */
  frozen: boolean;
  /** Timers fire this many ms early (libuv's coarse loop time against performance.now()). */
  earlyMs: number;
}

/** A hand-written fake of time shared by several simulated processes; advanced only by the test. */
export class FakeTime {
  nowMs = 0;
  private sleepers: Sleeper[] = [];
  private seq = 0;

  constructor(private readonly wallBaseMs = Date.UTC(2026, 11, 1, 10, 0, 0)) {}

  /** A process whose wall clock is `wallSkewMs` off the others (the election must not care). */
  process(name: string, wallSkewMs = 0): FakeProcess {
    const proc: FakeProcess = {
      name,
      frozen: false,
      earlyMs: 0,
      monotonic: { nowMs: () => this.nowMs },
      wall: { now: () => new Date(this.wallBaseMs + wallSkewMs + this.nowMs) },
      timer: {
        sleep: (ms: number, signal?: AbortSignal): Promise<void> =>
          new Promise((resolve) => {
            if (signal?.aborted === true) return resolve();
            const onAbort = (): void => {
              this.sleepers = this.sleepers.filter((s) => s !== sleeper);
              resolve();
            };
            const sleeper: Sleeper = {
              // Early only for waits longer than the error, as a real timer is never due in the past.
              dueMs: this.nowMs + Math.max(0, ms > proc.earlyMs ? ms - proc.earlyMs : ms),
              seq: this.seq++,
              owner: proc,
              resolve: () => {
                signal?.removeEventListener('abort', onAbort);
                resolve();
              },
            };
            this.sleepers.push(sleeper);
            signal?.addEventListener('abort', onAbort, { once: true });
          }),
      },
    };
    return proc;
  }

  /** Moves time forward by `ms`, firing every due timer of unfrozen processes in order. */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await settle(); // let work started at the current instant reach its next sleep first
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.nowMs = Math.max(this.nowMs, next.dueMs);
      // Every timer due at this instant fires together, so processes woken at once really race.
      const due = this.sleepers.filter((s) => !s.owner.frozen && s.dueMs === next.dueMs);
      this.sleepers = this.sleepers.filter((s) => !due.includes(s));
      for (const sleeper of due.sort(bySchedule)) sleeper.resolve();
      await settle();
    }
    this.nowMs = target;
    await settle();
  }

  /** Advances in steps of `stepMs` until `done()` or `limitMs` passed; returns the time reached. */
  async advanceUntil(done: () => boolean, limitMs: number, stepMs = 10): Promise<number> {
    const end = this.nowMs + limitMs;
    while (!done() && this.nowMs < end) await this.advance(stepMs);
    return this.nowMs;
  }

  /** Unfreezes `proc`: its overdue timers fire at once, in due order, as after SIGCONT. */
  async thaw(proc: FakeProcess): Promise<void> {
    proc.frozen = false;
    const overdue = this.sleepers
      .filter((s) => s.owner === proc && s.dueMs <= this.nowMs)
      .sort(bySchedule);
    for (const sleeper of overdue) {
      this.sleepers = this.sleepers.filter((s) => s !== sleeper);
      sleeper.resolve();
      await settle();
    }
  }

  private nextDue(target: number): Sleeper | undefined {
    return this.sleepers.filter((s) => !s.owner.frozen && s.dueMs <= target).sort(bySchedule)[0];
  }
}

function bySchedule(a: Sleeper, b: Sleeper): number {
  return a.dueMs - b.dueMs || a.seq - b.seq;
}

/** Lets pending promise chains (fake store calls resolve at once) run to their next sleep. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 30; i++) await new Promise<void>((r) => setImmediate(r));
}
