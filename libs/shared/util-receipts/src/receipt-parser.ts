import { PodminError } from '@podmin/util-errors';
import { isDns1123Label } from '@podmin/util-manifest';
import { parseDeploymentKey } from '@podmin/util-desired-state';
import { isJsonObject, parseStrictJson, type JsonValue } from '@podmin/util-oci';
import {
  MAX_REASON_CHARS,
  MAX_RECEIPT_BYTES,
  MAX_RECEIPT_PODS,
  RECEIPT_SCHEMA,
  isNodeId,
  type KubeletState,
  type NodeReceipt,
  type PodReceipt,
} from './receipt';

// The strict receipt parser: a receipt is read from a bucket any node can write to, so its
// bytes are checked field by field against the schema before anyone trusts them.

/** Raised for a receipt that is not exactly this schema. */
export class ReceiptFormatError extends PodminError {
  constructor(what: string, message: string, cause?: unknown) {
    super('INVALID_ARGUMENT', `reading ${what}: ${message}`, cause === undefined ? {} : { cause });
    this.name = 'ReceiptFormatError';
  }
}

const REVISION = /^[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

const RECEIPT_FIELDS = [
  'schema',
  'nodegroup',
  'node',
  'agentVersion',
  'indexEtag',
  'time',
  'heartbeatSeconds',
  'kubelet',
  'error',
  'pods',
  'omittedPods',
] as const;
const POD_FIELDS = [
  'deployment',
  'revision',
  'ready',
  'restarts',
  'reason',
  'identityExpiry',
] as const;

/**
 * Strictly parses receipt bytes: at most {@link MAX_RECEIPT_BYTES}, valid UTF-8 JSON without
 * duplicate keys or trailing data, exactly the schema's fields with their types and bounds.
 * `expected` (from the key it was read at) must match the receipt's NodeGroup and node, so one
 * node cannot speak for another by writing under its own key.
 */
export function parseReceipt(
  body: Buffer | string,
  expected?: { nodegroup: string; node: string },
): NodeReceipt {
  const what = expected ? `the receipt of node ${expected.node}` : 'a receipt';
  let raw: JsonValue;
  try {
    raw = parseStrictJson(body, what, { maxBytes: MAX_RECEIPT_BYTES, maxDepth: 4 });
  } catch (err) {
    throw new ReceiptFormatError(
      what,
      err instanceof Error ? stripPrefix(err.message, what) : String(err),
      err,
    );
  }
  const fail = (message: string): never => {
    throw new ReceiptFormatError(what, message);
  };
  if (!isJsonObject(raw)) return fail('must be a JSON object');
  exactFields(raw, RECEIPT_FIELDS, '', fail);
  if (raw['schema'] !== RECEIPT_SCHEMA) fail(`schema must be ${RECEIPT_SCHEMA}`);
  const nodegroup = text(raw, 'nodegroup', 63, fail);
  if (!isDns1123Label(nodegroup)) fail('nodegroup must be a DNS-1123 label');
  const node = text(raw, 'node', 63, fail);
  if (!isNodeId(node)) fail('node must be a node ID');
  if (expected && (expected.nodegroup !== nodegroup || expected.node !== node)) {
    fail(`it names node ${node} of NodeGroup ${nodegroup}, not the node its key names`);
  }
  const time = text(raw, 'time', 40, fail);
  if (!RFC3339.test(time) || Number.isNaN(Date.parse(time))) fail('time must be an RFC 3339 time');
  const heartbeatSeconds = integer(raw, 'heartbeatSeconds', 1, 86_400, fail);
  const kubelet = raw['kubelet'];
  if (kubelet !== 'ok' && kubelet !== 'absent' && kubelet !== 'unavailable') {
    fail('kubelet must be "ok", "absent" or "unavailable"');
  }
  const podsRaw = raw['pods'];
  if (!Array.isArray(podsRaw)) return fail('pods must be an array');
  if (podsRaw.length > MAX_RECEIPT_PODS) fail(`pods must list at most ${MAX_RECEIPT_PODS}`);
  const seen = new Set<string>();
  const pods = podsRaw.map((value, i): PodReceipt => {
    const at = `pods[${i}]`;
    if (!isJsonObject(value)) return fail(`${at} must be an object`);
    exactFields(value, POD_FIELDS, `${at}.`, fail);
    const deployment = text(value, 'deployment', 127, fail, at);
    let ref: { nodegroup: string };
    try {
      ref = parseDeploymentKey(deployment);
    } catch {
      return fail(`${at}.deployment must be <nodegroup>/<name>`);
    }
    if (ref.nodegroup !== nodegroup) fail(`${at}.deployment is not in NodeGroup ${nodegroup}`);
    if (seen.has(deployment)) fail(`${at}.deployment ${deployment} is listed twice`);
    seen.add(deployment);
    const revision = nullable(
      value,
      'revision',
      (v) => typeof v === 'string' && REVISION.test(v),
      fail,
      at,
      '12 lowercase hex characters',
    );
    const ready = nullable(value, 'ready', (v) => typeof v === 'boolean', fail, at, 'a boolean');
    const restarts = nullable(
      value,
      'restarts',
      (v) => Number.isSafeInteger(v) && (v as number) >= 0,
      fail,
      at,
      'a non-negative integer',
    );
    const reason = nullable(
      value,
      'reason',
      isReason,
      fail,
      at,
      `a string of at most ${MAX_REASON_CHARS} characters`,
    );
    const identityExpiry = nullable(
      value,
      'identityExpiry',
      (v) => typeof v === 'string' && RFC3339.test(v),
      fail,
      at,
      'an RFC 3339 time',
    );
    return {
      deployment,
      revision: revision as string | null,
      ready: ready as boolean | null,
      restarts: restarts as number | null,
      reason: reason as string | null,
      identityExpiry: identityExpiry as string | null,
    };
  });
  return {
    schema: RECEIPT_SCHEMA,
    nodegroup,
    node,
    agentVersion: text(raw, 'agentVersion', 64, fail),
    indexEtag: nullable(
      raw,
      'indexEtag',
      (v) => typeof v === 'string' && v.length <= 256,
      fail,
      '',
      'a string',
    ) as string | null,
    time,
    heartbeatSeconds,
    kubelet: kubelet as KubeletState,
    error: nullable(
      raw,
      'error',
      isReason,
      fail,
      '',
      `a string of at most ${MAX_REASON_CHARS} characters`,
    ) as string | null,
    pods,
    omittedPods: integer(raw, 'omittedPods', 0, 1_000_000, fail),
  };
}

function isReason(v: JsonValue | undefined): boolean {
  // eslint-disable-next-line no-control-regex -- a reason is one line of text
  return typeof v === 'string' && [...v].length <= MAX_REASON_CHARS && !/[\u0000-\u001f]/.test(v);
}

function stripPrefix(message: string, what: string): string {
  const prefix = `parsing ${what}: `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}

function exactFields(
  value: { [key: string]: JsonValue },
  fields: readonly string[],
  at: string,
  fail: (m: string) => never,
): void {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key)) fail(`${at}${key} is an unknown field`);
  }
  for (const key of fields) if (!(key in value)) fail(`${at}${key} is missing`);
}

function text(
  value: { [key: string]: JsonValue },
  key: string,
  max: number,
  fail: (m: string) => never,
  at = '',
): string {
  const v = value[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) {
    return fail(`${at ? `${at}.` : ''}${key} must be a string of 1-${max} characters`);
  }
  return v;
}

function integer(
  value: { [key: string]: JsonValue },
  key: string,
  min: number,
  max: number,
  fail: (m: string) => never,
): number {
  const v = value[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    return fail(`${key} must be an integer from ${min} to ${max}`);
  }
  return v;
}

function nullable(
  value: { [key: string]: JsonValue },
  key: string,
  ok: (v: JsonValue | undefined) => boolean,
  fail: (m: string) => never,
  at: string,
  expected: string,
): JsonValue {
  const v = value[key];
  if (v === null) return null;
  if (!ok(v)) fail(`${at ? `${at}.` : ''}${key} must be null or ${expected}`);
  return v as JsonValue;
}
