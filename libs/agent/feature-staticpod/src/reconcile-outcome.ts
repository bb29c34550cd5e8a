import { PodminError } from '@podmin/util-errors';

// What one reconcile pass and the reconciler report: health, the applied state receipts carry,
// a pass's result and the degraded pass's error (moved out of reconciler.ts unchanged).

/** One deployment that could not be staged this pass; it keeps its last published Pod. */
export interface DeploymentFault {
  /** Index key `<nodegroup>/<name>`. */
  deployment: string;
  /** Why staging it failed. */
  error: string;
  /** Whether a previously published Pod was kept for it (false: it was never published). */
  kept: boolean;
}

/**
 * A pass that could not reconcile everything but kept the node's state (some deployments
 * faulted, or the index vanished within its grace): reported unhealthy, retried at the poll
 * interval rather than with backoff, since nothing is wrong with reading the bucket itself.
 */
export class DegradedPassError extends PodminError {
  /** What the pass still published for the deployments that staged (when it got that far). */
  readonly result: PassResult | undefined;
  /** The deployments that kept their last published Pod. */
  readonly faults: readonly DeploymentFault[];

  constructor(
    code: PodminError['code'],
    message: string,
    details: { result?: PassResult; faults?: readonly DeploymentFault[]; cause?: unknown } = {},
  ) {
    super(code, message, details.cause === undefined ? {} : { cause: details.cause });
    this.name = 'DegradedPassError';
    this.result = details.result;
    this.faults = details.faults ?? [];
  }
}

/** Health of the reconciler as reported to the supervisor. */
export interface ReconcileHealth {
  healthy: boolean;
  lastError: string | null;
  lastSuccess: Date | null;
  indexEtag: string | null;
  pods: string[];
}

/** What the node applied for one deployment of its NodeGroup, for its receipt. */
export interface AppliedDeployment {
  /** Index key `<nodegroup>/<name>`. */
  deployment: string;
  /** Revision of the published Pod payload ({@link podRevision}); null when none is published. */
  revision: string | null;
  /** The published Pod's namespace and `podmin.dev/revision`, to find it among kubelet's Pods. */
  published: { namespace: string; annotation: string } | null;
  /** Expiry of the published Pod's workload identity. */
  identityExpiry: string | null;
  /** Why the last pass could not stage it (it keeps its last published Pod); null when it could. */
  fault: string | null;
}

/** What the node applied: the index ETag of its last complete pass and each deployment's state. */
export interface AppliedState {
  indexEtag: string | null;
  /** Why the last pass failed as a whole (not one deployment's fault); null when it did not. */
  error: string | null;
  deployments: AppliedDeployment[];
}

/** Outcome of one pass; `warning` is something the operator must hear about even though it worked. */
export type PassResult = (
  { status: 'published'; changedFiles: number; removedFiles: number } | { status: 'unchanged' }
) & { warning?: string };
