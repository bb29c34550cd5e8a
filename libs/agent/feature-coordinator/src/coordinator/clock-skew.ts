import type { StructuredLogger } from '@podmin/agent-util-logging';
import { CLOCK_SKEW_MARGIN_MS } from '@podmin/util-pki';
import type { ServerTimeSource } from '../coordinator.ports';

/**
 * Skew between this node's clock and the object store's beyond which the agent warns (log and
 * `/readyz` note). Ten times inside the certificates' backdating (`CLOCK_SKEW_MARGIN_MS`,
 * 5 min), so an operator hears of a drifting clock long before a peer refuses a fresh leaf.
 */
export const CLOCK_SKEW_WARN_MS = 30_000;

/**
 * A warning clears only once the skew is this far inside the threshold: an HTTP `Date` has
 * one-second resolution and a round trip adds to it, so a skew near 30 s would otherwise flap.
 */
const CLEAR_MARGIN_MS = 5_000;

/**
 * Watches this node's clock against the object store's (from samples the store keeps of its
 * responses: no request of its own). It logs once per change of state, not per check: when the
 * skew first exceeds the threshold, when it moves by more than the threshold again while
 * warned, and when it is back inside; while warned it gives a note for the health detail.
 */
export class ClockSkewMonitor {
  /** The skew (local − server, ms) last warned about; undefined while within the threshold. */
  private warnedMs: number | undefined;

  constructor(
    private readonly source: ServerTimeSource,
    private readonly log: StructuredLogger,
    private readonly thresholdMs: number = CLOCK_SKEW_WARN_MS,
  ) {}

  /** Judges the latest sample; returns the health note while the clock is skewed. */
  check(): string | undefined {
    const sample = this.source.lastServerTime();
    if (sample !== undefined) this.judge(sample.localMs - sample.serverMs);
    return this.warnedMs === undefined ? undefined : this.note(this.warnedMs);
  }

  private judge(skewMs: number): void {
    const fields = { skewMs: Math.round(skewMs), thresholdMs: this.thresholdMs };
    if (this.warnedMs === undefined) {
      if (Math.abs(skewMs) <= this.thresholdMs) return;
    } else if (Math.abs(skewMs) <= this.thresholdMs - CLEAR_MARGIN_MS) {
      this.warnedMs = undefined;
      this.log.event('info', 'clock skew cleared', fields);
      return;
    } else if (
      Math.abs(skewMs) <= this.thresholdMs ||
      Math.abs(skewMs - this.warnedMs) <= this.thresholdMs
    ) {
      return; // still the state warned about
    }
    this.warnedMs = skewMs;
    this.log.event('warn', 'clock skew', { ...fields, certificateMarginMs: CLOCK_SKEW_MARGIN_MS });
  }

  private note(skewMs: number): string {
    const seconds = Math.round(Math.abs(skewMs) / 1000);
    const side = skewMs > 0 ? 'ahead of' : 'behind';
    return `clock skew: this node's clock is ${seconds} s ${side} the object store's (over ${this.thresholdMs / 1000} s); check its time synchronisation`;
  }
}
