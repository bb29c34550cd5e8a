import { PodminError } from '@podmin/util-errors';
import { isJsonObject, parseStrictJson, type JsonValue } from '@podmin/util-oci';

/**
 * Key of the cluster's rollout state: written by the leader (admissions, halts; fenced by its
 * own conditional write, like snapshots) and by the CLI (`rollout pause|resume`), both by
 * compare-and-swap on its ETag.
 */
export const ROLLOUT_STATE_KEY = 'dns/rollouts.json';

/** Largest rollout state object read (1,000 nodes × a few deployments fit well within). */
export const MAX_ROLLOUT_STATE_BYTES = 4 * 1024 * 1024;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Why a rollout stopped admitting nodes. */
export interface RolloutHalt {
  /** The node whose new Pod did not become available. */
  readonly node: string;
  /** What it reported (kubelet's reason, or the deadline that passed). */
  readonly reason: string;
  /** RFC 3339. */
  readonly time: string;
}

/** One deployment's rollout toward its target Pod payload. */
export interface DeploymentRollout {
  /** Pod payload key the rollout moves nodes to (the index entry's `pod` when the leader planned). */
  readonly target: string;
  /** Raised by `rollout resume` after a halt: nodes that failed an earlier attempt try again. */
  readonly attempt: number;
  /** Nodes admitted to the target, with the time (RFC 3339); a node is never admitted twice. */
  readonly admitted: Readonly<Record<string, string>>;
  /** Set by `rollout pause`: no new admissions (nodes already admitted carry on). */
  readonly paused: boolean;
  /** Set by the leader when a node's new Pod was not available in time; null while not halted. */
  readonly halted: RolloutHalt | null;
}

/** The cluster's rollout state, keyed by deployment (`<nodegroup>/<name>`). */
export interface RolloutState {
  readonly schema: 1;
  readonly deployments: Readonly<Record<string, DeploymentRollout>>;
}

/** The state of a cluster that never rolled anything out. */
export const EMPTY_ROLLOUT_STATE: RolloutState = Object.freeze({ schema: 1, deployments: {} });

/** A fresh rollout toward `target`, keeping a pause the operator set. */
export function newRollout(target: string, paused = false): DeploymentRollout {
  return { target, attempt: 1, admitted: {}, paused, halted: null };
}

/** Canonical JSON (keys sorted, one trailing newline): equal states serialize to equal bytes. */
export function serializeRolloutState(state: RolloutState): string {
  const deployments = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(state.deployments).sort()) {
    const d = state.deployments[key] as DeploymentRollout;
    const admitted = Object.create(null) as Record<string, string>;
    for (const node of Object.keys(d.admitted).sort()) admitted[node] = d.admitted[node] as string;
    deployments[key] = {
      target: d.target,
      attempt: d.attempt,
      admitted,
      paused: d.paused,
      halted:
        d.halted === null
          ? null
          : { node: d.halted.node, reason: d.halted.reason, time: d.halted.time },
    };
  }
  return `${JSON.stringify({ schema: 1, deployments })}\n`;
}

/** A rollout state object that is not what {@link serializeRolloutState} writes. */
export class RolloutStateFormatError extends PodminError {
  constructor(message: string) {
    super('INVALID_MANIFEST', `reading ${ROLLOUT_STATE_KEY}: ${message}`);
    this.name = 'RolloutStateFormatError';
  }
}

/** Strict parse: bounded, no duplicate keys, exactly the schema's fields. */
export function parseRolloutState(body: Buffer | string): RolloutState {
  let raw: JsonValue;
  try {
    raw = parseStrictJson(body, ROLLOUT_STATE_KEY, {
      maxBytes: MAX_ROLLOUT_STATE_BYTES,
      maxDepth: 5,
    });
  } catch (err) {
    throw new RolloutStateFormatError(err instanceof Error ? err.message : String(err));
  }
  const object = (v: JsonValue | undefined, what: string): Record<string, JsonValue> => {
    if (v === undefined || !isJsonObject(v))
      throw new RolloutStateFormatError(`${what} must be an object`);
    return v;
  };
  const exactly = (o: Record<string, JsonValue>, fields: string[], what: string): void => {
    for (const k of Object.keys(o))
      if (!fields.includes(k))
        throw new RolloutStateFormatError(`${what} has an unknown field ${k}`);
    for (const k of fields)
      if (!(k in o)) throw new RolloutStateFormatError(`${what} lacks the field ${k}`);
  };
  const text = (v: JsonValue | undefined, what: string): string => {
    if (typeof v !== 'string' || v === '')
      throw new RolloutStateFormatError(`${what} must be a non-empty string`);
    return v;
  };
  // The planner compares admission times with the clock: a time it cannot read would never
  // reach the progress deadline.
  const time = (v: JsonValue | undefined, what: string): string => {
    const t = text(v, what);
    if (!RFC3339.test(t) || !Number.isFinite(Date.parse(t)))
      throw new RolloutStateFormatError(`${what} must be an RFC 3339 time`);
    return t;
  };
  const top = object(raw, 'the state');
  exactly(top, ['schema', 'deployments'], 'the state');
  if (top['schema'] !== 1) throw new RolloutStateFormatError('schema must be 1');
  // Null prototypes keep a key such as "__proto__" or "constructor" an ordinary key.
  const deployments = Object.create(null) as Record<string, DeploymentRollout>;
  for (const [key, value] of Object.entries(object(top['deployments'], 'deployments'))) {
    const what = `deployment ${key}`;
    const d = object(value, what);
    exactly(d, ['target', 'attempt', 'admitted', 'paused', 'halted'], what);
    const attempt = d['attempt'];
    if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 1)
      throw new RolloutStateFormatError(`${what}: attempt must be an integer ≥ 1`);
    const admitted = Object.create(null) as Record<string, string>;
    for (const [node, at] of Object.entries(object(d['admitted'], `${what}: admitted`)))
      admitted[node] = time(at, `${what}: admitted ${node}`);
    if (typeof d['paused'] !== 'boolean')
      throw new RolloutStateFormatError(`${what}: paused must be a boolean`);
    let halted: RolloutHalt | null = null;
    if (d['halted'] !== null) {
      const h = object(d['halted'], `${what}: halted`);
      exactly(h, ['node', 'reason', 'time'], `${what}: halted`);
      halted = {
        node: text(h['node'], `${what}: halted.node`),
        reason: text(h['reason'], `${what}: halted.reason`),
        time: time(h['time'], `${what}: halted.time`),
      };
    }
    deployments[key] = {
      target: text(d['target'], `${what}: target`),
      attempt,
      admitted,
      paused: d['paused'],
      halted,
    };
  }
  return { schema: 1, deployments };
}
