import type { LogLevel, StructuredLogger } from './registry.ports';

/**
 * One log line per window, with how many were folded into it: what any local process can
 * trigger at will (a disconnect, a refusal for load) must not grow the agent log per request.
 */
export class RateLimitedLog {
  private windowStart = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes the line if none was written this window; otherwise counts it for the next one. */
  event(
    logger: StructuredLogger,
    level: LogLevel,
    msg: string,
    fields: Record<string, unknown>,
  ): void {
    const now = this.now();
    if (now - this.windowStart < this.windowMs) {
      this.suppressed++;
      return;
    }
    const folded = this.suppressed;
    this.windowStart = now;
    this.suppressed = 0;
    logger.event(level, msg, folded > 0 ? { ...fields, suppressedSinceLast: folded } : fields);
  }
}
