import { PodminError } from '@podmin/util-errors';
import { DegradedPassError, type DeploymentFault, type PassResult } from './reconcile-outcome';

// A pass's per-deployment staging faults and the one error they make of the pass: one broken
// deployment keeps what it last published while the others move on.

/** One deployment's staging fault with the error that caused it (its code decides the pass's). */
export type StagingFault = DeploymentFault & { cause: unknown };

/** The fault of deployment `key`, which failed staging with `err` (`kept`: it keeps its Pod). */
export function stagingFault(key: string, err: unknown, kept: boolean): StagingFault {
  return {
    deployment: key,
    error: err instanceof Error ? err.message : String(err),
    kept,
    cause: err,
  };
}

/**
 * The pass's error when some deployments kept their last published Pod instead of updating: the
 * faults' code when they share one (else SERVICE_UNAVAILABLE), each fault described.
 */
export function degradedPassError(
  nodegroup: string,
  faults: readonly StagingFault[],
  result: PassResult,
): DegradedPassError {
  const codes = new Set(
    faults.map((f) => (f.cause instanceof PodminError ? f.cause.code : 'INTERNAL')),
  );
  const [only] = codes;
  const described = faults
    .map(
      (f) =>
        `deployment ${f.deployment} ${f.kept ? 'keeps its last published Pod' : 'is not published'}: ${f.error}`,
    )
    .join('; ');
  return new DegradedPassError(
    codes.size === 1 && only !== undefined ? only : 'SERVICE_UNAVAILABLE',
    `staging NodeGroup ${nodegroup}: ${described}`,
    {
      result,
      faults: faults.map(({ deployment, error, kept }) => ({ deployment, error, kept })),
      ...(faults.length === 1 ? { cause: faults[0]?.cause } : {}),
    },
  );
}
