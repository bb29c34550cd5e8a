import { stat } from 'node:fs/promises';
import {
  KubeletPodsClient,
  type KubeletPod,
  type PodEvent,
} from '@podmin/agent-data-access-kubelet-pods';
import type { LocalReadyPod, ReadinessHealth, ReadinessSource } from '../coordinator.ports';
import { errorMessage } from '../error-message';
import { readyPods } from './ready-pods';
import {
  DEFAULT_READINESS_TIMING,
  type KubeletReadinessDeps,
  type KubeletReadinessOptions,
  type PodsApi,
  type ReadinessTiming,
} from './readiness-options';
import { ReadySetNotifier } from './ready-set-notifier';

async function isSocket(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

/** Where the watch stands; {@link KubeletReadiness.health} words it. */
type Phase = 'connecting' | 'watching' | 'reconnecting' | 'no-kubelet';

/**
 * The node's Ready Pods from kubelet's Pods API ({@link ReadinessSource}). Each connection
 * starts with kubelet's full ADDED list and replaces the set at `initial-sync-complete`, so a
 * reconnect is also a resync; a periodic `list()` covers events the stream missed. After the
 * watch is lost the last set is kept for `holdMs`, then cleared.
 */
export class KubeletReadiness implements ReadinessSource {
  /** The effective timings. */
  readonly timing: ReadinessTiming;
  private readonly socketPath: string;
  private readonly connect: (socketPath: string) => PodsApi;
  private readonly socketPresent: (socketPath: string) => Promise<boolean>;
  private pods = new Map<string, KubeletPod>();
  private ready: readonly LocalReadyPod[] = Object.freeze([]);
  private readonly notifier: ReadySetNotifier;
  private phase: Phase = 'connecting';
  private reason = '';
  private running = false;
  private runSignal: AbortSignal | undefined;
  /** When the watch was last lost after being in sync (monotonic ms); undefined while in sync. */
  private lostAtMs: number | undefined;
  private everSynced = false;
  /** UIDs changed by watch events while a resync `list()` was in flight. */
  private touchedDuringList: Set<string> | undefined;

  constructor(
    private readonly deps: KubeletReadinessDeps,
    options: KubeletReadinessOptions,
  ) {
    this.socketPath = options.socketPath;
    this.timing = Object.freeze({ ...DEFAULT_READINESS_TIMING, ...options.timing });
    this.connect = deps.connect ?? ((socket) => new KubeletPodsClient(socket));
    this.socketPresent = deps.socketPresent ?? isSocket;
    this.notifier = new ReadySetNotifier({
      timer: deps.timer,
      coalesceMs: this.timing.coalesceMs,
      current: () => this.ready,
      log: deps.log,
    });
  }

  /** The current Ready Pods (with an IPv6 address), sorted by address. */
  current(): readonly LocalReadyPod[] {
    return this.ready;
  }

  /** Calls `listener` once per coalesced change of the set; returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    return this.notifier.onChange(listener);
  }

  /** The watch's state in words, for the coordinator's health. */
  health(): ReadinessHealth {
    const api = `the kubelet Pods API at ${this.socketPath}`;
    switch (this.phase) {
      case 'watching':
        return {
          ok: true,
          state: 'watching',
          detail: `watching ${api}: ${this.ready.length} Ready of ${this.pods.size} Pods`,
        };
      case 'connecting':
        return { ok: false, state: 'reconnecting', detail: `connecting to ${api}` };
      case 'reconnecting':
        return {
          ok: false,
          state: 'reconnecting',
          detail: `reconnecting to ${api} (${this.reason}); ${this.holdText()}`,
        };
      case 'no-kubelet': {
        const base = `no kubelet Pods API at ${this.socketPath}`;
        // A node without the node stack is a legal configuration; kubelet vanishing is not.
        return this.everSynced
          ? { ok: false, state: 'no-kubelet', detail: `${base} (it was there); ${this.holdText()}` }
          : { ok: true, state: 'no-kubelet', detail: base };
      }
    }
  }

  /** Watches until `signal` aborts: reconnects with bounded backoff, resyncs periodically. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('KubeletReadiness.run is already running');
    this.running = true;
    this.runSignal = signal;
    let backoffMs = this.timing.backoffInitialMs;
    this.deps.log?.event('info', 'watch kubelet Pods', { socket: this.socketPath });
    try {
      while (!signal.aborted) {
        if (!(await this.socketPresent(this.socketPath))) {
          if (this.phase !== 'no-kubelet') {
            this.deps.log?.event('info', 'no kubelet Pods API', { socket: this.socketPath });
          }
          this.phase = 'no-kubelet';
          // The socket is gone while kubelet restarts; its Pods keep serving meanwhile.
          this.markLost();
          await this.deps.timer.sleep(this.timing.socketPollMs, signal);
          continue;
        }
        const synced = await this.attempt(signal);
        if (signal.aborted) break;
        // A connection that reached sync ran fine; its successor starts from a short wait again.
        if (synced) backoffMs = this.timing.backoffInitialMs;
        await this.deps.timer.sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, this.timing.backoffMaxMs);
      }
    } finally {
      this.running = false;
      this.runSignal = undefined;
    }
  }

  /** One connection: watch (and resync) until it breaks; true when it reached the initial sync. */
  private async attempt(signal: AbortSignal): Promise<boolean> {
    const attempt = new AbortController();
    const stop = (): void => attempt.abort();
    signal.addEventListener('abort', stop, { once: true });
    let client: PodsApi;
    try {
      client = this.connect(this.socketPath);
    } catch (err) {
      signal.removeEventListener('abort', stop);
      if (!signal.aborted) this.lost(`connecting: ${errorMessage(err)}`, false);
      return false;
    }
    let synced = false;
    let reason = 'the stream ended';
    const fail = (why: string): void => {
      reason = why;
      attempt.abort();
    };
    let resync: Promise<void> | undefined;
    // A connection that accepts but never finishes its initial list must not hang the watch.
    const syncDeadline = this.deps.timer
      .sleep(this.timing.listTimeoutMs, attempt.signal)
      .then(() => {
        if (!synced && !attempt.signal.aborted) {
          fail(`no initial sync within ${this.timing.listTimeoutMs} ms`);
        }
      });
    const initial = new Map<string, KubeletPod>();
    try {
      for await (const event of client.watch(attempt.signal)) {
        if (synced) {
          this.apply(event);
          continue;
        }
        if (event.type === 'initial-sync-complete') {
          synced = true;
          this.synced(initial);
          resync = this.resyncLoop(client, attempt.signal, fail);
        } else if (event.type === 'deleted') initial.delete(event.pod.uid);
        else initial.set(event.pod.uid, event.pod);
      }
    } catch (err) {
      reason = errorMessage(err);
    } finally {
      signal.removeEventListener('abort', stop);
      attempt.abort();
      await Promise.all([resync, syncDeadline]);
      client.close();
    }
    if (!signal.aborted) this.lost(reason, synced);
    return synced;
  }

  /** Every `resyncMs`, replaces the set by a full list; a failed list ends the connection. */
  private async resyncLoop(
    client: PodsApi,
    signal: AbortSignal,
    fail: (reason: string) => void,
  ): Promise<void> {
    while (!signal.aborted) {
      await this.deps.timer.sleep(this.timing.resyncMs, signal);
      if (signal.aborted) return;
      const touched = new Set<string>();
      this.touchedDuringList = touched;
      let listed: KubeletPod[] | undefined;
      try {
        listed = await untilAborted(client.list(this.timing.listTimeoutMs), signal);
      } catch (err) {
        fail(`resync failed: ${errorMessage(err)}`);
        return;
      } finally {
        this.touchedDuringList = undefined;
      }
      if (listed === undefined || signal.aborted) return;
      const next = new Map<string, KubeletPod>();
      for (const pod of listed) if (!touched.has(pod.uid)) next.set(pod.uid, pod);
      // An event that arrived during the list is at least as new as the list's view of that Pod.
      for (const uid of touched) {
        const pod = this.pods.get(uid);
        if (pod) next.set(uid, pod);
      }
      this.pods = next;
      this.recompute();
    }
  }

  private synced(initial: Map<string, KubeletPod>): void {
    this.pods = initial;
    this.phase = 'watching';
    this.lostAtMs = undefined;
    this.everSynced = true;
    this.recompute();
    this.deps.log?.event('info', 'kubelet Pods synced', {
      socket: this.socketPath,
      pods: this.pods.size,
      ready: this.ready.length,
    });
  }

  private apply(event: PodEvent): void {
    if (event.type === 'initial-sync-complete') return;
    this.touchedDuringList?.add(event.pod.uid);
    if (event.type === 'deleted') this.pods.delete(event.pod.uid);
    else this.pods.set(event.pod.uid, event.pod);
    this.recompute();
  }

  private lost(reason: string, wasSynced: boolean): void {
    this.phase = 'reconnecting';
    this.reason = reason;
    this.markLost();
    this.deps.log?.event(wasSynced ? 'warn' : 'info', 'lost kubelet Pods watch', {
      socket: this.socketPath,
      reason,
      keeping: this.ready.length,
    });
  }

  /** Starts the hold on the last set the first time the watch is found out of sync. */
  private markLost(): void {
    if (this.lostAtMs !== undefined || !this.everSynced) return;
    const lostAt = this.deps.monotonic.nowMs();
    this.lostAtMs = lostAt;
    const signal = this.runSignal;
    void this.deps.timer.sleep(this.timing.holdMs, signal).then(() => {
      // Still the same outage: nothing has synced since.
      if (signal?.aborted !== true && this.lostAtMs === lostAt) this.expireHold();
    });
  }

  private holdText(): string {
    if (this.ready.length === 0) return 'no Ready Pods kept';
    const left = (this.lostAtMs ?? this.deps.monotonic.nowMs()) + this.timing.holdMs;
    const ms = Math.max(0, Math.round(left - this.deps.monotonic.nowMs()));
    return `keeping ${this.ready.length} Ready Pods last seen for ${ms} ms more`;
  }

  private expireHold(): void {
    if (this.pods.size === 0) return;
    this.deps.log?.event('warn', 'clear Ready Pods', {
      socket: this.socketPath,
      cleared: this.ready.length,
      holdMs: this.timing.holdMs,
    });
    this.pods = new Map();
    this.recompute();
  }

  private recompute(): void {
    this.ready = Object.freeze(readyPods(this.pods.values()));
    this.notifier.changed(this.runSignal);
  }
}

/** `promise`, or undefined as soon as `signal` aborts (a late rejection is then ignored). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
