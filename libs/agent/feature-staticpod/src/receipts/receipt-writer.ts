import { stat } from 'node:fs/promises';
import { KubeletPodsClient, type KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import {
  DEFAULT_HEARTBEAT_MS,
  receiptChangeKey,
  receiptKey,
  serializeReceipt,
  type KubeletState,
  type NodeReceipt,
  type PodReceipt,
} from '@podmin/util-receipts';
import { REVISION_ANNOTATION } from '../pod-transform';
import type { AppliedState } from '../reconcile-outcome';
import type { ReceiptSink } from '../staticpod.ports';

/** What kubelet reports right now: its Pods, or why it cannot say. */
export interface KubeletReport {
  state: KubeletState;
  pods: readonly KubeletPod[];
}

/** Reads kubelet's current Pods for a receipt. */
export interface KubeletView {
  report(): Promise<KubeletReport>;
  /** Releases the connection. */
  close(): void;
}

/** Timing of receipt writes. */
export interface ReceiptTiming {
  /** Rewrite an unchanged receipt this often (default 5 min). */
  heartbeatMs: number;
  /** Never write more often than this, so a flapping Pod cannot run up requests (default 10 s). */
  minIntervalMs: number;
  /** How often the writer looks at what changed (default 2 s; a look costs no request). */
  pollMs: number;
}

/** Default receipt timing: 5 min heartbeat, writes at least 10 s apart, looks every 2 s. */
export const DEFAULT_RECEIPT_TIMING: ReceiptTiming = Object.freeze({
  heartbeatMs: DEFAULT_HEARTBEAT_MS,
  minIntervalMs: 10_000,
  pollMs: 2_000,
});

/** Who writes the receipt. */
export interface ReceiptIdentity {
  nodegroup: string;
  node: string;
  agentVersion: string;
}

// Waiting reasons of a container that is simply starting: not a failure to report.
const STARTING = new Set(['ContainerCreating', 'PodInitializing']);

/** The last failure kubelet reports for a Pod (waiting or terminated, with its message), if any. */
export function kubeletReason(pod: KubeletPod): string | null {
  const describe = (c: KubeletPod['containers'][number]): string =>
    `${c.reason ?? ''} (container ${c.name})${c.message ? `: ${c.message}` : ''}`;
  const waiting = pod.containers.find(
    (c) => c.state === 'waiting' && c.reason !== undefined && !STARTING.has(c.reason),
  );
  if (waiting) return describe(waiting);
  const died = pod.containers.find(
    (c) => c.state === 'terminated' && c.reason !== undefined && c.reason !== 'Completed',
  );
  if (died) return describe(died);
  return pod.phase === 'Failed' ? 'the Pod failed' : null;
}

/**
 * The receipt for what the reconciler applied and what kubelet reports. A deployment's kubelet
 * Pod is the one carrying the published `podmin.dev/revision` in its namespace, so an old
 * revision still running never counts as the new one being Ready.
 */
export function composeReceipt(
  who: ReceiptIdentity,
  applied: AppliedState,
  kubelet: KubeletReport,
  time: Date,
  heartbeatMs: number,
): NodeReceipt {
  const pods = applied.deployments.map((d): PodReceipt => {
    const running =
      kubelet.state === 'ok' && d.published
        ? kubelet.pods.find(
            (p) =>
              p.namespace === d.published?.namespace &&
              p.annotations[REVISION_ANNOTATION] === d.published.annotation,
          )
        : undefined;
    const known = kubelet.state === 'ok' && d.published !== null;
    return {
      deployment: d.deployment,
      revision: d.revision,
      ready: known ? (running?.ready ?? false) : null,
      restarts: running ? running.containers.reduce((n, c) => n + c.restartCount, 0) : null,
      // The agent's own fault first: it explains why the Pod kubelet runs is not the desired one.
      reason: d.fault ?? (running ? kubeletReason(running) : null),
      identityExpiry: d.identityExpiry,
    };
  });
  return {
    schema: 1,
    nodegroup: who.nodegroup,
    node: who.node,
    agentVersion: who.agentVersion,
    indexEtag: applied.indexEtag,
    time: time.toISOString(),
    heartbeatSeconds: Math.max(1, Math.round(heartbeatMs / 1000)),
    kubelet: kubelet.state,
    error: applied.error,
    pods,
    omittedPods: 0,
  };
}

/** What one {@link ReceiptWriter.tick} did. */
export type TickResult = 'written' | 'unchanged' | 'deferred' | 'failed';

/**
 * Writes this node's receipt `status/<nodegroup>/<node-id>.json` unconditionally (each node
 * owns its key): only when its content (everything but the time) changed, at most once per
 * `minIntervalMs`, or when the heartbeat is due. A failed write is retried no sooner than
 * `minIntervalMs` later.
 */
export class ReceiptWriter {
  /** PUT requests issued (written or failed), for the request budget. */
  writes = 0;
  private lastKey: string | undefined;
  private lastAttemptMs: number | undefined;
  private lastWrittenMs: number | undefined;
  private readonly key: string;

  constructor(
    private readonly who: ReceiptIdentity,
    private readonly sink: ReceiptSink,
    private readonly kubelet: KubeletView,
    readonly timing: ReceiptTiming = DEFAULT_RECEIPT_TIMING,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.key = receiptKey(who.nodegroup, who.node);
  }

  /** Releases kubelet's connection. */
  close(): void {
    this.kubelet.close();
  }

  /** Looks at the applied state and kubelet, and writes the receipt if due. */
  async tick(applied: AppliedState): Promise<TickResult> {
    const time = this.now();
    const receipt = composeReceipt(
      this.who,
      applied,
      await this.kubelet.report(),
      time,
      this.timing.heartbeatMs,
    );
    const key = receiptChangeKey(receipt);
    const nowMs = time.getTime();
    const sinceAttempt = this.lastAttemptMs === undefined ? Infinity : nowMs - this.lastAttemptMs;
    const sinceWrite = this.lastWrittenMs === undefined ? Infinity : nowMs - this.lastWrittenMs;
    const heartbeatDue = sinceWrite >= this.timing.heartbeatMs;
    if (key === this.lastKey && !heartbeatDue) return 'unchanged';
    if (sinceAttempt < this.timing.minIntervalMs) return 'deferred';
    this.lastAttemptMs = nowMs;
    this.writes++;
    await this.sink.put(this.key, serializeReceipt(receipt));
    this.lastKey = key;
    this.lastWrittenMs = nowMs;
    return 'written';
  }
}

/**
 * kubelet's Pods over its Pods API socket, listed on demand: `absent` when the socket is not
 * there (no node stack), `unavailable` when the list fails. A list per look (every few
 * seconds, over a local socket) rather than a second long-lived watch: a receipt needs only
 * the current state, and the coordinator's watch lives in another process.
 */
export function kubeletPodsView(socketPath: string, listTimeoutMs = 2_000): KubeletView {
  let client: KubeletPodsClient | undefined;
  return {
    async report() {
      try {
        if (!(await stat(socketPath)).isSocket()) return { state: 'absent', pods: [] };
      } catch {
        return { state: 'absent', pods: [] };
      }
      client ??= new KubeletPodsClient(socketPath);
      try {
        return { state: 'ok', pods: await client.list(listTimeoutMs) };
      } catch {
        // A fresh channel next time: kubelet may have restarted behind the same path.
        client.close();
        client = undefined;
        return { state: 'unavailable', pods: [] };
      }
    },
    close() {
      client?.close();
      client = undefined;
    },
  };
}
