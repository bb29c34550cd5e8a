import { PodminError } from '@podmin/util-errors';

/**
 * A DaemonSet's update strategy as podmin carries it in the Pod payload: Kubernetes'
 * `spec.updateStrategy` and `spec.minReadySeconds`, plus podmin's own progress deadline.
 */
export interface RolloutStrategy {
  /** `RollingUpdate` (the default) or `OnDelete`. */
  readonly type: 'RollingUpdate' | 'OnDelete';
  /** An integer or a percentage (`"25%"`) of the NodeGroup's live nodes. */
  readonly maxUnavailable: number | string;
  /** An integer or a percentage (`"10%"`) of the NodeGroup's live nodes. */
  readonly maxSurge: number | string;
  /** A Pod is available once Ready for this long (Kubernetes' `minReadySeconds`). */
  readonly minReadySeconds: number;
  /** A node whose new Pod is not available within this halts the rollout (`podmin.dev/progress-deadline`). */
  readonly progressDeadlineSeconds: number;
}

/** Kubernetes' DaemonSet defaults: RollingUpdate, maxUnavailable 1, maxSurge 0, minReadySeconds 0; podmin's 5 min deadline. */
export const DEFAULT_STRATEGY: RolloutStrategy = Object.freeze({
  type: 'RollingUpdate',
  maxUnavailable: 1,
  maxSurge: 0,
  minReadySeconds: 0,
  progressDeadlineSeconds: 300,
});

/**
 * Annotation of the Pod payload carrying the deployment's strategy as canonical JSON, written
 * by the CLI at deploy; reserved (a template may not set it itself).
 */
export const ROLLOUT_ANNOTATION = 'podmin.dev/rollout';

/** The DaemonSet annotation naming the progress deadline (`5m`, `90s`, `1h30m`). */
export const PROGRESS_DEADLINE_ANNOTATION = 'podmin.dev/progress-deadline';

/** Annotation `podmin rollout restart` sets on the Pod template (kubectl's `restartedAt`). */
export const RESTARTED_AT_ANNOTATION = 'podmin.dev/restartedAt';

const PERCENT = /^(0|[1-9][0-9]{0,2})%$/;

/** Whether `value` is an integer ≥ 0 or a percentage string from `0%` to `100%`. */
export function isIntOrPercent(value: unknown): value is number | string {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0;
  if (typeof value !== 'string') return false;
  const m = PERCENT.exec(value);
  return m !== null && Number(m[1]) <= 100;
}

/**
 * An int-or-percent resolved against `total` nodes, as Kubernetes does for DaemonSets: a
 * percentage rounds up.
 */
export function resolveIntOrPercent(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const m = PERCENT.exec(value);
  if (m === null)
    throw new PodminError(
      'INVALID_ARGUMENT',
      `resolving ${JSON.stringify(value)}: not an integer or a percentage`,
    );
  return Math.ceil((Number(m[1]) * total) / 100);
}

/** The limits of one wave for `total` live nodes. */
export interface RolloutLimits {
  readonly maxUnavailable: number;
  readonly maxSurge: number;
}

/**
 * Kubernetes' `ResolveFenceposts` for a DaemonSet: both values round up; when both resolve to 0
 * (a percentage of few nodes can), maxUnavailable becomes 1 so the rollout can move.
 */
export function resolveLimits(strategy: RolloutStrategy, total: number): RolloutLimits {
  const maxSurge = resolveIntOrPercent(strategy.maxSurge, total);
  let maxUnavailable = resolveIntOrPercent(strategy.maxUnavailable, total);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxUnavailable, maxSurge };
}

const isZero = (value: number | string): boolean => value === 0 || value === '0%';

/** Whether the strategy surges: a new Pod beside the old one rather than in its place. */
export function surges(strategy: RolloutStrategy): boolean {
  return strategy.type === 'RollingUpdate' && !isZero(strategy.maxSurge);
}

/** Canonical JSON of a strategy (fixed key order), the value of {@link ROLLOUT_ANNOTATION}. */
export function serializeStrategy(strategy: RolloutStrategy): string {
  return JSON.stringify({
    type: strategy.type,
    maxUnavailable: strategy.maxUnavailable,
    maxSurge: strategy.maxSurge,
    minReadySeconds: strategy.minReadySeconds,
    progressDeadlineSeconds: strategy.progressDeadlineSeconds,
  });
}

const FIELDS = ['type', 'maxUnavailable', 'maxSurge', 'minReadySeconds', 'progressDeadlineSeconds'];

/**
 * The strategy a Pod payload carries in its annotations; {@link DEFAULT_STRATEGY} when it carries
 * none (payloads committed before rollouts existed). Strict: a malformed value is refused.
 */
export function strategyOf(
  annotations: Readonly<Record<string, string>> | undefined,
): RolloutStrategy {
  const text = annotations?.[ROLLOUT_ANNOTATION];
  if (text === undefined) return DEFAULT_STRATEGY;
  const bad = (why: string): PodminError =>
    new PodminError('INVALID_MANIFEST', `reading annotation ${ROLLOUT_ANNOTATION}: ${why}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('not an object');
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => !FIELDS.includes(k));
  if (unknown !== undefined) throw bad(`unknown field ${unknown}`);
  const type = o['type'];
  if (type !== 'RollingUpdate' && type !== 'OnDelete')
    throw bad('type must be RollingUpdate or OnDelete');
  const seconds = (field: string): number => {
    const v = o[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw bad(`${field} must be an integer ≥ 0`);
    return v;
  };
  const intOrPercent = (field: string): number | string => {
    const v = o[field];
    if (!isIntOrPercent(v)) throw bad(`${field} must be an integer ≥ 0 or a percentage`);
    return v;
  };
  const strategy: RolloutStrategy = {
    type,
    maxUnavailable: intOrPercent('maxUnavailable'),
    maxSurge: intOrPercent('maxSurge'),
    minReadySeconds: seconds('minReadySeconds'),
    progressDeadlineSeconds: seconds('progressDeadlineSeconds'),
  };
  if (strategy.progressDeadlineSeconds === 0) throw bad('progressDeadlineSeconds must be > 0');
  // Kubernetes' validation: a rolling update that may neither stop nor add a Pod cannot move.
  if (type === 'RollingUpdate' && isZero(strategy.maxUnavailable) && isZero(strategy.maxSurge))
    throw bad('maxUnavailable and maxSurge may not both be 0');
  return strategy;
}

const DURATION = /^(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$/;

/**
 * Seconds of a duration as users write it (`5m`, `90s`, `1h30m`; Go's units h, m, s), or
 * undefined when it is not one or is zero.
 */
export function parseDurationSeconds(text: string): number | undefined {
  if (text === '') return undefined;
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  const seconds = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** A duration in seconds as `5m0s`-style text for messages. */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}
