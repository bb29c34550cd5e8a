/** How a loop that polls shared state waits after failures. */
export interface FaultBackoffOptions {
  /**
   * The loop's regular poll interval: the cap of every wait. While a fault lasts the loop probes
   * at most once per poll, and the first probe after the fault ends finds it healed.
   */
  readonly pollMs: number;
  /** The first wait after a failure (default: a fifth of the poll, at least 100 ms). */
  readonly initialMs?: number;
  /** Fraction of jitter (default 0.1): waits below the cap vary ±, waits at the cap add 0–jitter. */
  readonly jitter?: number;
  /** Random source in [0, 1) (default Math.random). */
  readonly random?: () => number;
}

/**
 * The agent's one retry policy for shared state (the bucket, the secret store, the leader):
 * after a failure it waits `initialMs`, doubling per consecutive failure up to the poll interval,
 * jittered so nodes that failed together do not probe together. A wait at the cap is never
 * shorter than the poll, so a sustained fault costs at most one probe per poll per loop — the
 * healthy rate — and recovery is seen by the next regular probe, within one poll plus jitter.
 */
export class FaultBackoff {
  private readonly pollMs: number;
  private readonly initialMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private failures = 0;
  private firstFailureMs: number | undefined;

  constructor(options: FaultBackoffOptions) {
    if (!Number.isFinite(options.pollMs) || options.pollMs <= 0)
      throw new RangeError(`FaultBackoff: pollMs must be > 0, not ${options.pollMs}`);
    this.pollMs = options.pollMs;
    this.initialMs = Math.min(
      this.pollMs,
      Math.max(1, options.initialMs ?? Math.max(100, this.pollMs / 5)),
    );
    this.jitter = Math.min(0.5, Math.max(0, options.jitter ?? 0.1));
    this.random = options.random ?? Math.random;
  }

  /** Consecutive failures since the last success. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** True between a failure and the next success. */
  get failing(): boolean {
    return this.failures > 0;
  }

  /** Epoch ms of the first failure of the current run of failures, if failing. */
  get failingSinceMs(): number | undefined {
    return this.firstFailureMs;
  }

  /** Records a failure; returns the wait before the next probe. */
  failed(nowMs: number = Date.now()): number {
    if (this.failures === 0) this.firstFailureMs = nowMs;
    this.failures++;
    const base = this.initialMs * 2 ** Math.min(30, this.failures - 1);
    if (base >= this.pollMs) return this.pollMs * (1 + this.jitter * this.random());
    return Math.min(this.pollMs, base * (1 - this.jitter + 2 * this.jitter * this.random()));
  }

  /** Records a success: the next failure starts from `initialMs` again. */
  succeeded(): void {
    this.failures = 0;
    this.firstFailureMs = undefined;
  }

  /** The regular wait after a success: the poll with the same jitter (±). */
  regular(): number {
    return this.pollMs * (1 - this.jitter + 2 * this.jitter * this.random());
  }
}
