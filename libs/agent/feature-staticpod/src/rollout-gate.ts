import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import { REVISION_ANNOTATION } from './pod-transform';
import { kubeletReason, type KubeletReport, type KubeletView } from './receipts/receipt-writer';
import type { SlotHealth } from './rollout/node-rollout';

/** The node's coordinator, as rollouts need it (agent-coordinator's SyncRollouts). */
export interface RolloutCoordination {
  sync(state: {
    reports: readonly NodeDeploymentReport[];
    draining: ReadonlyArray<{ namespace: string; revision: string; replacementRevision: string }>;
    indexEtag: string;
  }): Promise<{ admissions: readonly Admission[]; leaderKnown: boolean }>;
}

/** What a pass tells the coordinator: what runs and what drains, at which index. */
export type RolloutSyncState = Parameters<RolloutCoordination['sync']>[0];

/** Whether a pass's rollouts wait for kubelet and the leader, with what they said. */
export interface RolloutGateAnswer {
  gated: boolean;
  kubelet: KubeletReport;
  admissions: readonly Admission[];
}

/**
 * The reconciler's link to kubelet and the node's coordinator for gated rollouts: asks before a
 * pass (kubelet's Pods, the leader's admissions), tells after it (what runs and drains), and
 * logs a lost coordinator once per cause. Without kubelet or a coordinator nothing is gated.
 */
export class RolloutGate {
  private lastSync: Parameters<RolloutCoordination['sync']>[0] = {
    reports: [],
    draining: [],
    indexEtag: '',
  };

  private lastSyncFailure: string | undefined;

  constructor(
    private readonly gating: {
      kubelet?: KubeletView;
      coordination?: RolloutCoordination;
      log?: (message: string, fields: Record<string, unknown>) => void;
    },
  ) {}

  /**
   * Whether rollouts are gated on this node (kubelet answers and a coordinator is there), with
   * kubelet's Pods and the leader's admissions. Without gating the target replaces at once.
   */
  async ask(any: boolean): Promise<RolloutGateAnswer> {
    const none = { gated: false, kubelet: { state: 'absent' as const, pods: [] }, admissions: [] };
    const { kubelet, coordination } = this.gating;
    if (!any || kubelet === undefined || coordination === undefined) return none;
    const report = await kubelet.report();
    if (report.state === 'absent') return none;
    try {
      const answer = await coordination.sync(this.lastSync);
      this.syncOk();
      return { gated: true, kubelet: report, admissions: answer.admissions };
    } catch (err) {
      this.syncFailed(err);
      return { gated: true, kubelet: report, admissions: [] };
    }
  }

  /** Tells the coordinator what runs and what drains after a pass. */
  async tell(state: RolloutSyncState): Promise<void> {
    this.lastSync = state;
    try {
      await this.gating.coordination?.sync(this.lastSync);
      this.syncOk();
    } catch (err) {
      this.syncFailed(err);
    }
  }

  private syncOk(): void {
    if (this.lastSyncFailure !== undefined) this.gating.log?.('reach coordinator again', {});
    this.lastSyncFailure = undefined;
  }

  /** Without the coordinator no node is admitted: what runs keeps running. Logged once per cause. */
  private syncFailed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastSyncFailure)
      this.gating.log?.('sync rollouts failed', { error: message, effect: 'no rollout moves' });
    this.lastSyncFailure = message;
  }
}

/** What kubelet says of a revision's Pod: Ready, available (Ready for `minReadySeconds`), its last failure. */
export function slotHealth(
  kubelet: KubeletReport,
  namespace: string,
  revision: string,
  minReadySeconds: number,
  nowMs: number,
): SlotHealth {
  const pod = kubelet.pods.find(
    (p) => p.namespace === namespace && p.annotations[REVISION_ANNOTATION] === revision,
  );
  if (pod === undefined) return { ready: false, available: false, reason: null };
  const readySinceMs = pod.readyTransition?.getTime() ?? nowMs;
  return {
    ready: pod.ready,
    available: pod.ready && nowMs - readySinceMs >= minReadySeconds * 1000,
    reason: kubeletReason(pod),
  };
}
