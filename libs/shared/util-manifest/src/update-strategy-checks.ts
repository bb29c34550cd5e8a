import {
  DEFAULT_STRATEGY,
  PROGRESS_DEADLINE_ANNOTATION,
  isIntOrPercent,
  parseDurationSeconds,
  surges,
} from '@podmin/util-rollout';
import type { RolloutStrategy } from '@podmin/util-rollout';
import type { ProblemSink } from './checks';
import { checkKeys, describeType, entryPath, expectRecord } from './checks';

// The rollout fields of a DaemonSet: its update strategy, progress deadline and what surging
// allows (moved out of deployment.ts unchanged).

const STRATEGY_PATH = 'spec.updateStrategy';
const ROLLING_UPDATE_PATH = `${STRATEGY_PATH}.rollingUpdate`;
const INT_OR_PERCENT_RULE = 'an integer ≥ 0 or a percentage from "0%" to "100%"';

/** What `spec.updateStrategy` resolves to, Kubernetes' defaults filled in. */
type UpdateStrategy = Pick<RolloutStrategy, 'type' | 'maxUnavailable' | 'maxSurge'>;

/**
 * Checks `spec.updateStrategy` with Kubernetes' DaemonSet rules and resolves it; an invalid part
 * is recorded and resolves to its default.
 */
export function checkUpdateStrategy(value: unknown, sink: ProblemSink): UpdateStrategy {
  const resolved = {
    type: DEFAULT_STRATEGY.type,
    maxUnavailable: DEFAULT_STRATEGY.maxUnavailable,
    maxSurge: DEFAULT_STRATEGY.maxSurge,
  };
  const strategy = value === undefined ? undefined : expectRecord(value, STRATEGY_PATH, sink);
  if (strategy === undefined) return resolved;
  checkKeys(strategy, ['type', 'rollingUpdate'], STRATEGY_PATH, sink);
  const { type, rollingUpdate } = strategy;
  if (type === 'RollingUpdate' || type === 'OnDelete') {
    resolved.type = type;
  } else if (type !== undefined) {
    sink.add(
      `${STRATEGY_PATH}.type`,
      `must be RollingUpdate (the default) or OnDelete, not ${describeType(type)}`,
    );
  }
  if (rollingUpdate === undefined) return resolved;
  if (resolved.type === 'OnDelete') {
    sink.add(
      ROLLING_UPDATE_PATH,
      'is only allowed with type RollingUpdate; with OnDelete a node moves to the new template only when its Pod is deleted, so remove rollingUpdate or set type to RollingUpdate',
    );
    return resolved;
  }
  const limits = expectRecord(rollingUpdate, ROLLING_UPDATE_PATH, sink);
  if (limits === undefined) return resolved;
  checkKeys(limits, ['maxUnavailable', 'maxSurge'], ROLLING_UPDATE_PATH, sink);
  let refused = false;
  for (const field of ['maxUnavailable', 'maxSurge'] as const) {
    const limit = limits[field];
    if (limit === undefined) continue;
    if (isIntOrPercent(limit)) {
      resolved[field] = limit;
    } else {
      sink.add(
        `${ROLLING_UPDATE_PATH}.${field}`,
        `must be ${INT_OR_PERCENT_RULE} (default ${DEFAULT_STRATEGY[field]}), not ${describeType(limit)}`,
      );
      refused = true;
    }
  }
  // After a refused value, the pair is judged once the user has fixed it.
  if (!refused && isZero(resolved.maxUnavailable) && isZero(resolved.maxSurge)) {
    const surgeDefaulted = limits.maxSurge === undefined ? ' (its default)' : '';
    sink.add(
      `${ROLLING_UPDATE_PATH}.maxUnavailable`,
      `may not be 0 when ${ROLLING_UPDATE_PATH}.maxSurge is also 0${surgeDefaulted}: no node could ever move to the new Pod; set maxSurge to 1 or more (${INT_OR_PERCENT_RULE}) to start each new Pod beside the old one, or maxUnavailable to 1 or more to replace the Pod in place`,
    );
  }
  return resolved;
}

function isZero(value: number | string): boolean {
  return value === 0 || value === '0%';
}

/** The DaemonSet's `podmin.dev/progress-deadline` in seconds, or undefined when absent or refused. */
export function checkProgressDeadline(
  text: string | undefined,
  sink: ProblemSink,
): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDurationSeconds(text);
  if (seconds === undefined) {
    sink.add(
      entryPath('metadata.annotations', PROGRESS_DEADLINE_ANNOTATION),
      `${JSON.stringify(text)} is not a duration; write a positive whole number of hours, minutes and seconds such as 90s, 5m or 1h30m (default 5m)`,
    );
  }
  return seconds;
}

/**
 * Refuses host ports and the host network with a surge: the old and the new Pod run side by
 * side on a node during a surge and cannot both bind the same host port.
 */
export function checkSurgeWithHostPorts(
  strategy: RolloutStrategy,
  hostBindings: readonly string[],
  sink: ProblemSink,
): void {
  if (!surges(strategy)) return;
  const surge = `${ROLLING_UPDATE_PATH}.maxSurge ${JSON.stringify(strategy.maxSurge)}`;
  for (const path of hostBindings) {
    const [what, remedy] = path.endsWith('.hostNetwork')
      ? ['true cannot be used with', "both bind the node's network ports; set maxSurge to 0"]
      : [
          'cannot be used with',
          'both need this host port; set maxSurge to 0 or remove the hostPort',
        ];
    sink.add(
      path,
      `${what} ${surge}: during a surge the old and the new Pod run side by side on a node and would ${remedy} (with maxUnavailable 1 or more, the old Pod stops before the new one starts)`,
    );
  }
}
