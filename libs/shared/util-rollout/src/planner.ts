import { PodminError } from '@podmin/util-errors';
import type { Admission, NodeDeploymentReport } from './report';
import {
  newRollout,
  serializeRolloutState,
  type DeploymentRollout,
  type RolloutHalt,
  type RolloutState,
} from './state';
import { formatDuration, resolveLimits, type RolloutStrategy } from './strategy';

/** A deployment the leader rolls out: its index entry's target Pod payload and strategy. */
export interface PlannedDeployment {
  /** Index key `<nodegroup>/<name>`. */
  readonly key: string;
  /** The NodeGroup whose live nodes run it. */
  readonly nodegroup: string;
  /** Pod payload key the index entry names now. */
  readonly target: string;
  readonly strategy: RolloutStrategy;
}

/** A node whose receipt is fresh, with what it last reported to the leader. */
export interface LiveNode {
  readonly id: string;
  readonly nodegroup: string;
  readonly reports: readonly NodeDeploymentReport[];
  /**
   * Deployments this node reports without an available Pod only since moments ago: reports
   * lag readiness by a Hello or two, so such a node may be up already. It counts as
   * unavailable but is not moved at once, outside the limits, as a node long down is.
   */
  readonly unsettled?: ReadonlySet<string>;
}

/** Everything one planning pass of the leader reads. */
export interface PlanInput {
  readonly deployments: readonly PlannedDeployment[];
  /** The rollout state as last read or written by this leader. */
  readonly state: RolloutState;
  readonly nodes: readonly LiveNode[];
  readonly now: Date;
}

/** What one planning pass decided. */
export interface PlanResult {
  /** The new state (to be written by a conditional PUT when {@link changed}). */
  readonly state: RolloutState;
  /** Whether the new state serializes differently from the one read. */
  readonly changed: boolean;
  /** Per live node id: one admission per deployment of its NodeGroup, sorted by deployment. */
  readonly admissions: ReadonlyMap<string, readonly Admission[]>;
  /** Halts set in this pass. */
  readonly halted: ReadonlyArray<{ readonly deployment: string; readonly halt: RolloutHalt }>;
  /** Admissions made in this pass. */
  readonly admittedNow: ReadonlyArray<{ readonly deployment: string; readonly node: string }>;
}

/**
 * The backstop past the progress deadline: the node itself reverts and reports `failed` at the
 * deadline, so the leader halts on its own only when that report is this much overdue.
 */
export const HALT_BACKSTOP_SECONDS = 60;

/** What the leader knows about one live node for one deployment. */
interface NodeView {
  readonly id: string;
  readonly report: NodeDeploymentReport | undefined;
  /** No Pod of the deployment: the node starts the target by itself, without an admission. */
  readonly noPod: boolean;
  readonly runsTarget: boolean;
  readonly targetAvailable: boolean;
  /** Some Pod of the deployment (old or new) is available. */
  readonly available: boolean;
  readonly admitted: boolean;
  /** It reported the target failed in the current attempt. */
  readonly failedHere: boolean;
  /** Its unavailability is too recent to act on (see {@link LiveNode.unsettled}). */
  readonly unsettled: boolean;
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function viewOf(node: LiveNode, key: string, entry: DeploymentRollout): NodeView {
  const report = node.reports.find((r) => r.deployment === key);
  const pods = report?.pods ?? [];
  const target = entry.target;
  return {
    id: node.id,
    report,
    noPod: pods.length === 0,
    runsTarget: pods.some((p) => p.pod === target),
    targetAvailable: pods.some((p) => p.pod === target && p.available),
    available: pods.some((p) => p.available),
    // Own properties only: a node id such as "constructor" is not admitted by Object.prototype.
    admitted: Object.hasOwn(entry.admitted, node.id),
    failedHere:
      report?.failed != null &&
      report.failed.pod === target &&
      report.failed.attempt === entry.attempt,
    unsettled: node.unsettled?.has(key) ?? false,
  };
}

/**
 * While nodes of a rollout are still moving, new admissions come at most this often (the
 * reconcilers' poll interval): the leader writes once per batch, not once per node.
 */
export const ADMIT_INTERVAL_MS = 5_000;

/**
 * One planning pass of the leader (DESIGN §6.12), with Kubernetes' DaemonSet rolling-update
 * rules counted over each NodeGroup's live nodes: which nodes move to each deployment's target
 * now, which rollouts halt, and the new rollout state. Pure and deterministic: the same input
 * gives the same output, whatever the order of `deployments` and `nodes`.
 */
export function planRollouts(input: PlanInput): PlanResult {
  const { state, now } = input;
  const nowIso = now.toISOString();
  const deployments = [...input.deployments].sort((a, b) => byString(a.key, b.key));
  const nodes = [...input.nodes].sort((a, b) => byString(a.id, b.id));
  for (let i = 1; i < deployments.length; i++)
    if (deployments[i]?.key === deployments[i - 1]?.key)
      throw new PodminError(
        'INTERNAL',
        `planning rollouts: deployment ${deployments[i]?.key} is listed twice`,
      );
  for (let i = 1; i < nodes.length; i++)
    if (nodes[i]?.id === nodes[i - 1]?.id)
      throw new PodminError('INTERNAL', `planning rollouts: node ${nodes[i]?.id} is listed twice`);

  // Null prototypes keep every key an ordinary one (state read from the bucket uses them too).
  const next = Object.create(null) as Record<string, DeploymentRollout>;
  const halted: { deployment: string; halt: RolloutHalt }[] = [];
  const admittedNow: { deployment: string; node: string }[] = [];

  for (const d of deployments) {
    const previous = Object.hasOwn(state.deployments, d.key) ? state.deployments[d.key] : undefined;
    // A new target starts a new rollout; an operator's pause survives it.
    const entry =
      previous === undefined
        ? newRollout(d.target)
        : previous.target !== d.target
          ? newRollout(d.target, previous.paused)
          : previous;
    const group = nodes.filter((n) => n.nodegroup === d.nodegroup);
    const views = group.map((n) => viewOf(n, d.key, entry));
    const limits = resolveLimits(d.strategy, group.length);

    let halt = entry.halted;
    if (halt === null) {
      const failed = views.find((v) => v.failedHere);
      if (failed?.report?.failed != null) {
        // The state's strict parse refuses an empty reason, so a node cannot make it unreadable.
        const reason = failed.report.failed.reason || 'no reason given';
        halt = { node: failed.id, reason, time: nowIso };
      } else {
        const deadlineMs = (d.strategy.progressDeadlineSeconds + HALT_BACKSTOP_SECONDS) * 1000;
        const overdue = views.find(
          (v) =>
            v.admitted &&
            !v.targetAvailable &&
            now.getTime() - Date.parse(entry.admitted[v.id] as string) > deadlineMs,
        );
        if (overdue !== undefined)
          halt = {
            node: overdue.id,
            reason: `no available Pod within ${formatDuration(d.strategy.progressDeadlineSeconds)} of its admission`,
            time: nowIso,
          };
      }
      if (halt !== null) halted.push({ deployment: d.key, halt });
    }

    const admitted = Object.assign(Object.create(null) as Record<string, string>, entry.admitted);
    const admit = (v: NodeView): void => {
      admitted[v.id] = nowIso;
      admittedNow.push({ deployment: d.key, node: v.id });
    };
    if (!entry.paused && halt === null && d.strategy.type !== 'OnDelete') {
      const candidates = views.filter(
        (v) => !v.noPod && !v.runsTarget && !v.admitted && !v.failedHere,
      );
      // Nodes whose old Pod is down lose nothing by moving: Kubernetes replaces them at once,
      // outside both limits.
      const down = candidates.filter((v) => !v.available && !v.unsettled);
      const up = candidates.filter((v) => v.available);
      let room: number;
      if (limits.maxSurge > 0) {
        // Counted before this pass's admissions, as Kubernetes' numSurge is.
        const surging = views.filter(
          (v) => !v.noPod && !v.targetAvailable && (v.admitted || v.runsTarget),
        ).length;
        room = limits.maxSurge - surging;
      } else {
        const unavailable = views.filter(
          (v) => !v.available || (v.admitted && !v.targetAvailable),
        ).length;
        room = limits.maxUnavailable - unavailable;
      }
      // Waves, not a trickle: while nodes are still moving, the next ones are admitted at most
      // once per node poll (an admission takes effect at a node's next poll anyway), so
      // admissions (one write each) stay O(waves), not O(nodes).
      const limit = limits.maxSurge > 0 ? limits.maxSurge : limits.maxUnavailable;
      const moving = limit - room;
      const lastMs = Math.max(0, ...Object.values(entry.admitted).map((t) => Date.parse(t)));
      const recent = now.getTime() - lastMs < ADMIT_INTERVAL_MS;
      const wave = moving > 0 && recent ? 0 : room;
      for (const v of down) admit(v);
      for (const v of up.slice(0, Math.max(0, wave))) admit(v);
    }
    next[d.key] = { ...entry, admitted, halted: halt };
  }

  const newState: RolloutState = { schema: 1, deployments: next };
  const admissions = new Map<string, Admission[]>();
  for (const n of nodes) {
    const list: Admission[] = [];
    for (const d of deployments) {
      if (d.nodegroup !== n.nodegroup) continue;
      const entry = next[d.key] as DeploymentRollout;
      list.push({
        deployment: d.key,
        target: entry.target,
        attempt: entry.attempt,
        admitted: Object.hasOwn(entry.admitted, n.id),
        halted: entry.halted !== null,
      });
    }
    admissions.set(n.id, list);
  }
  return {
    state: newState,
    changed: serializeRolloutState(newState) !== serializeRolloutState(state),
    admissions,
    halted,
    admittedNow,
  };
}
