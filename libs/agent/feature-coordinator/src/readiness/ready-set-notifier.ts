import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { LocalReadyPod } from '../coordinator.ports';
import type { ElectionTimer } from '../election/election.ports';
import { errorMessage } from '../error-message';

/** What a {@link ReadySetNotifier} runs on. */
export interface ReadySetNotifierDeps {
  readonly timer: ElectionTimer;
  readonly log?: StructuredLogger;
  /** Changes within this window after the first one give a single notification. */
  readonly coalesceMs: number;
  /** The Ready set as it stands now. */
  readonly current: () => readonly LocalReadyPod[];
}

/**
 * Tells listeners that the Ready set changed, once per burst: a change schedules one check
 * `coalesceMs` later, which notifies only when the set differs from the one last notified
 * (reordering alone is no change).
 */
export class ReadySetNotifier {
  private readonly listeners = new Set<() => void>();
  private notifiedKey = setKey([]);
  private flushPending = false;

  constructor(private readonly deps: ReadySetNotifierDeps) {}

  /** Calls `listener` once per coalesced change of the set; returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The set may have changed: check within `coalesceMs`, unless `signal` aborts first. */
  changed(signal: AbortSignal | undefined): void {
    if (this.flushPending) return;
    this.flushPending = true;
    void this.deps.timer.sleep(this.deps.coalesceMs, signal).then(() => {
      this.flushPending = false;
      if (signal?.aborted !== true) this.flush();
    });
  }

  private flush(): void {
    const key = setKey(this.deps.current());
    if (key === this.notifiedKey) return;
    this.notifiedKey = key;
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.deps.log?.event('error', 'readiness listener failed', { error: errorMessage(err) });
      }
    }
  }
}

/** A comparable text of a set, labels in key order, so reordering alone is no change. */
function setKey(pods: readonly LocalReadyPod[]): string {
  return JSON.stringify(
    pods.map((p) => [
      p.address,
      p.namespace,
      p.pod,
      Object.keys(p.labels)
        .sort()
        .map((k) => [k, p.labels[k]]),
    ]),
  );
}
