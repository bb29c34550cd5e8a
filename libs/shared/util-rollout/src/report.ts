/**
 * What a node says about one deployment of its NodeGroup, in every Hello to the leader: the
 * Pods it runs for it (by Pod payload key) and whether each is available, and the target it
 * gave up on. Deployments it runs no Pod of are left out.
 */
export interface NodeDeploymentReport {
  /** Index key `<nodegroup>/<name>`. */
  readonly deployment: string;
  /** The Pods the node runs for it: one, or two while a surge is in progress. */
  readonly pods: readonly ReportedPod[];
  /** A target whose Pod did not become available here in time (the node went back); null when none. */
  readonly failed: FailedTarget | null;
}

/** One of a node's Pods of a deployment. */
export interface ReportedPod {
  /** Its Pod payload key. */
  readonly pod: string;
  /** Ready for `minReadySeconds` (true on a node without kubelet, which cannot tell). */
  readonly available: boolean;
}

/** A target that failed on a node. */
export interface FailedTarget {
  /** Its Pod payload key. */
  readonly pod: string;
  /** The rollout attempt it failed in ({@link DeploymentRollout.attempt}). */
  readonly attempt: number;
  /** Why (kubelet's reason, or the progress deadline). */
  readonly reason: string;
}

/** The leader's word to one node about one deployment it is rolling out. */
export interface Admission {
  /** Index key `<nodegroup>/<name>`. */
  readonly deployment: string;
  /** Pod payload key of the rollout's target. */
  readonly target: string;
  readonly attempt: number;
  /** Whether this node may move to the target now. */
  readonly admitted: boolean;
  /** The rollout halted: a node not yet available on the target goes back to its previous Pod. */
  readonly halted: boolean;
}
