import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import type {
  DeploymentRolloutReport,
  RolloutAdmission,
} from './generated/podmin/agent/v1/rollout';

/** The contract's message of a node's report on one deployment. */
export function reportToProto(report: NodeDeploymentReport): DeploymentRolloutReport {
  return {
    deployment: report.deployment,
    pods: report.pods.map((p) => ({ pod: p.pod, available: p.available })),
    failed:
      report.failed === null
        ? undefined
        : { pod: report.failed.pod, attempt: report.failed.attempt, reason: report.failed.reason },
  };
}

/** A decoded report (proto-loader gives null for an absent message). */
export function reportOfProto(message: DeploymentRolloutReport): NodeDeploymentReport {
  const failed = message.failed ?? null;
  return {
    deployment: message.deployment,
    pods: (message.pods ?? []).map((p) => ({ pod: p.pod, available: p.available })),
    failed:
      failed === null || failed.pod === ''
        ? null
        : { pod: failed.pod, attempt: failed.attempt, reason: failed.reason },
  };
}

/** The contract's message of an admission. */
export function admissionToProto(admission: Admission): RolloutAdmission {
  return { ...admission };
}

/** A decoded admission. */
export function admissionOf(message: RolloutAdmission): Admission {
  return {
    deployment: message.deployment,
    target: message.target,
    attempt: message.attempt,
    admitted: message.admitted,
    halted: message.halted,
  };
}
