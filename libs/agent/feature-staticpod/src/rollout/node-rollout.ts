import {
  formatDuration,
  surges,
  type Admission,
  type FailedTarget,
  type NodeDeploymentReport,
  type RolloutStrategy,
} from '@podmin/util-rollout';
import { podRevision } from '@podmin/util-receipts';
import { deploymentRevision } from '../pod-transform';

/** How long a Pod stays published after it left its Service's backends, before kubelet stops it. */
export const ROLLOUT_DRAIN_MS = 4_000;

/** A Pod payload and its Service payload, as an index entry names them. */
export interface PayloadPair {
  readonly pod: string;
  readonly service?: string | undefined;
}

/** One static Pod this node runs (or is about to) for a deployment. */
export interface Slot extends PayloadPair {
  /** Its static Pod name (the manifest file's name and kubelet's Pod name). */
  readonly staticName: string;
  /** Its `podmin.dev/revision`. */
  readonly revision: string;
  /** When this node published it (ms on the reconciler's clock): its progress deadline counts from here. */
  readonly sinceMs: number;
}

/** What kubelet says of one revision's Pod on this node. */
export interface SlotHealth {
  readonly ready: boolean;
  /** Ready for minReadySeconds. */
  readonly available: boolean;
  /** kubelet's last failure for it (e.g. `ImagePullBackOff (container web): …`), if any. */
  readonly reason: string | null;
}

/** What one deployment's decision works from. */
export interface DecisionInput {
  /** The deployment's Pod name (its identity and secrets are the same for every slot). */
  readonly name: string;
  readonly target: PayloadPair;
  readonly strategy: RolloutStrategy;
  /** The leader's word for this deployment (undefined: none, e.g. no leader, not yet planned). */
  readonly admission: Admission | undefined;
  /** Whether rollouts are gated here: kubelet answers and a coordinator is there to ask. */
  readonly gated: boolean;
  readonly health: (revision: string) => SlotHealth;
  readonly nowMs: number;
}

/** One deployment's memory on this node. */
interface Memory {
  slots: Slot[];
  /** Revisions leaving the backends, since when, and the revision replacing each ('' for none). */
  draining: Map<string, { sinceMs: number; replacement: string }>;
  /** The Pod a replace-in-place moved from (to go back to); undefined when none. */
  previous: PayloadPair | undefined;
  failed: FailedTarget | null;
  /** The target of the last decision. */
  target?: string;
}

/**
 * The node's side of rollouts (DESIGN §6.12), per deployment: which static Pods to publish now.
 * A node with no Pod of a deployment starts the target at once. Otherwise it moves only when
 * the leader admitted it: with surge, the target starts as a second static Pod and the old one
 * leaves the Service's backends and then goes once the new one is available; without surge,
 * the old one leaves the backends and is then replaced in place. A target not available
 * within the progress deadline (or in a halted rollout) is given up: the node goes back to its
 * previous Pod and reports the failure, which halts the rollout at the leader. Without gating
 * (no kubelet to tell readiness, or no coordinator) the target replaces what runs at once.
 */
export class NodeRollouts {
  private readonly memory = new Map<string, Memory>();

  constructor(private readonly drainMs = ROLLOUT_DRAIN_MS) {}

  /** Whether a deployment is known here (its slots were adopted or decided). */
  has(key: string): boolean {
    return this.memory.has(key);
  }

  /** Takes the slots found on disk at start (an agent restart keeps what runs). */
  adopt(key: string, slots: readonly Slot[]): void {
    this.memory.set(key, {
      slots: [...slots],
      draining: new Map(),
      previous: undefined,
      failed: null,
    });
  }

  /** Forgets deployments no longer in desired state. */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.memory.keys()) if (!keys.has(key)) this.memory.delete(key);
  }

  /** The slots to publish now for deployment `key`, in order (old first). */
  decide(key: string, input: DecisionInput): readonly Slot[] {
    const memory: Memory = this.memory.get(key) ?? {
      slots: [],
      draining: new Map(),
      previous: undefined,
      failed: null,
    };
    this.memory.set(key, memory);
    memory.target = input.target.pod;
    memory.slots = this.next(memory, input);
    for (const revision of memory.draining.keys())
      if (!memory.slots.some((s) => s.revision === revision)) memory.draining.delete(revision);
    return memory.slots;
  }

  /** Whether a deployment still moves here (and the reconciler should look again soon). */
  active(key: string, input: Pick<DecisionInput, 'target' | 'gated' | 'health'>): boolean {
    const memory = this.memory.get(key);
    if (memory === undefined || !input.gated) return false;
    const targetRevision = revisionOf(input.target);
    const target = memory.slots.find((s) => s.revision === targetRevision);
    if (memory.draining.size > 0 || memory.slots.length > 1) return true;
    if (target === undefined) return memory.failed?.pod !== input.target.pod;
    return !input.health(target.revision).available;
  }

  /** This node's report on deployment `key` for the leader. */
  report(
    key: string,
    gated: boolean,
    health: (revision: string) => SlotHealth,
  ): NodeDeploymentReport {
    const memory = this.memory.get(key);
    return {
      deployment: key,
      pods: (memory?.slots ?? []).map((s) => ({
        pod: s.pod,
        available: gated ? health(s.revision).available : true,
      })),
      failed: memory?.failed ?? null,
    };
  }

  /** Why the current target failed here, for the receipt; null when it did not. */
  failure(key: string): string | null {
    const memory = this.memory.get(key);
    const failed = memory?.failed;
    if (!failed || failed.pod !== memory?.target) return null;
    return `rollout to ${podRevision(failed.pod)} failed on this node, back on the previous Pod: ${failed.reason}`;
  }

  /** The Pods leaving their Service's backends: revision and the revision replacing each. */
  drains(key: string): Array<{ revision: string; replacement: string }> {
    const memory = this.memory.get(key);
    return memory === undefined
      ? []
      : [...memory.draining].map(([revision, d]) => ({ revision, replacement: d.replacement }));
  }

  private next(memory: Memory, input: DecisionInput): Slot[] {
    const { target, nowMs, name } = input;
    const targetRevision = revisionOf(target);
    const slots = memory.slots;
    const fresh = (staticName: string, pair: PayloadPair = target): Slot => ({
      pod: pair.pod,
      service: pair.service,
      staticName,
      revision: revisionOf(pair),
      sinceMs: nowMs,
    });
    if (slots.length === 0) return [fresh(name)];
    if (!input.gated) {
      const keep = slots.find((s) => s.revision === targetRevision) ?? slots[0];
      if (keep?.revision === targetRevision) return [keep];
      return [fresh(keep?.staticName ?? name)];
    }
    const admission = input.admission?.target === target.pod ? input.admission : undefined;
    const attempt = admission?.attempt ?? 0;
    const halted = admission?.halted ?? false;
    const deadlineMs = input.strategy.progressDeadlineSeconds * 1000;
    const current = slots.find((s) => s.revision === targetRevision);
    const others = slots.filter((s) => s !== current);

    if (current !== undefined) {
      const health = input.health(current.revision);
      if (health.available) {
        memory.previous = undefined;
        if (memory.failed?.pod === target.pod) memory.failed = null;
        // The old Pods leave the backends first, then go.
        return [
          ...others.filter(
            (o) =>
              input.health(o.revision).ready && this.draining(memory, o, current.revision, nowMs),
          ),
          current,
        ];
      }
      const late = nowMs - current.sinceMs > deadlineMs;
      if (!late && !halted) return slots;
      if (late && memory.failed?.pod !== target.pod)
        memory.failed = {
          pod: target.pod,
          attempt,
          reason:
            health.reason ??
            `no available Pod within ${formatDuration(input.strategy.progressDeadlineSeconds)}`,
        };
      if (others.length > 0) {
        // A surge given up: the new Pod simply goes (after leaving the backends if it joined them).
        const old = this.kept(memory, others, input.health);
        const staying = others.filter(
          (o) =>
            o === old ||
            (input.health(o.revision).ready && this.draining(memory, o, old.revision, nowMs)),
        );
        const keepNew = health.ready && this.draining(memory, current, old.revision, nowMs);
        return keepNew ? [...staying, current] : staying;
      }
      const previous = memory.previous;
      if (previous === undefined || previous.pod === target.pod) return slots;
      // Replaced in place and not available: back to the previous Pod, under the same name.
      memory.previous = undefined;
      return [fresh(current.staticName, previous)];
    }

    // The node does not run the target: it keeps one Pod (the available one) until admitted.
    const health = (s: Slot): SlotHealth => input.health(s.revision);
    if (others.length === 0) return [fresh(name)];
    const old = this.kept(memory, others, input.health);
    const extra = others.filter(
      (s) => s !== old && health(s).ready && this.draining(memory, s, old.revision, nowMs),
    );
    const failedHere =
      memory.failed !== null &&
      memory.failed.pod === target.pod &&
      memory.failed.attempt >= attempt;
    if (
      input.strategy.type === 'OnDelete' ||
      admission === undefined ||
      !admission.admitted ||
      halted ||
      failedHere
    )
      return [...extra, old];
    if (surges(input.strategy)) {
      // The Pod's own name when free, else the surge name (a Pod still draining may hold it).
      const taken = [...extra, old].some((s) => s.staticName === name);
      const staticName = taken ? surgeName(name, targetRevision) : name;
      return [...extra, old, fresh(staticName)];
    }
    // Without surge: the old Pod leaves the backends, then the target replaces it in place.
    if (health(old).ready && this.draining(memory, old, '', nowMs)) return [...extra, old];
    memory.previous = { pod: old.pod, service: old.service };
    return [...extra, fresh(old.staticName)];
  }

  /**
   * Of the Pods the node runs besides the target, the one it keeps serving: an available one
   * that is not leaving the backends, else any available one, else the first not leaving, else
   * the oldest. A Pod still draining after the previous rollout (Ready until its drain ends) is
   * never kept over the Pod that replaced it: keeping it would make that Pod drain too, and
   * both would leave the Service's backends at once.
   */
  private kept(
    memory: Memory,
    others: readonly Slot[],
    health: (revision: string) => SlotHealth,
  ): Slot {
    const staying = others.filter((s) => !memory.draining.has(s.revision));
    const available = (s: Slot): boolean => health(s.revision).available;
    return (staying.find(available) ?? others.find(available) ?? staying[0] ?? others[0]) as Slot;
  }

  /** Starts (or continues) a slot's drain; true while it must stay published. */
  private draining(memory: Memory, slot: Slot, replacement: string, nowMs: number): boolean {
    const drain = memory.draining.get(slot.revision);
    if (drain === undefined) {
      memory.draining.set(slot.revision, { sinceMs: nowMs, replacement });
      return true;
    }
    return nowMs - drain.sinceMs < this.drainMs;
  }
}

/** The `podmin.dev/revision` of a payload pair. */
export function revisionOf(pair: PayloadPair): string {
  return deploymentRevision(pair.pod, pair.service);
}

/**
 * The static name of a surge Pod beside one named `name`: `<name>-<first 8 hex of its
 * revision>`, within the 63 characters of a DNS label.
 */
export function surgeName(name: string, revision: string): string {
  return `${name.slice(0, 54)}-${revision.slice(0, 8)}`;
}
