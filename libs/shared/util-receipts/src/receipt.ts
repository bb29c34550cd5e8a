import { PodminError } from '@podmin/util-errors';
import { isDns1123Label } from '@podmin/util-manifest';
import { parseDeploymentKey, parsePodKey } from '@podmin/util-desired-state';
import { isJsonObject, parseStrictJson, type JsonValue } from '@podmin/util-oci';

/** Version of the receipt document; a reader refuses any other. */
export const RECEIPT_SCHEMA = 1;

/** Prefix of every receipt object in the bucket. */
export const RECEIPTS_PREFIX = 'status/';

/** Most Pods one receipt lists; the rest are only counted in `omittedPods`. */
export const MAX_RECEIPT_PODS = 100;

/** Longest reason (node error or per-Pod failure) a receipt carries, in characters. */
export const MAX_REASON_CHARS = 256;

/**
 * Upper bound of one serialised receipt, and of every read of one. With every field at its
 * cap (100 Pods, 127-character keys, 256-character reasons of 3-byte UTF-8 characters) a
 * receipt is about 106 KiB; the receipt spec checks that against this bound.
 */
export const MAX_RECEIPT_BYTES = 128 * 1024;

/** How often an agent rewrites an unchanged receipt by default. */
export const DEFAULT_HEARTBEAT_MS = 5 * 60_000;

/** A receipt older than this many of its node's heartbeat intervals is stale. */
export const STALE_HEARTBEATS = 3;

/** Characters of the Pod payload's SHA-512 that name a revision. */
export const REVISION_LENGTH = 12;

/** What the node knows of kubelet's Pods API: `absent` means no node stack, so Ready is unknown. */
export type KubeletState = 'ok' | 'absent' | 'unavailable';

/** One deployment of the node's NodeGroup as the node applied and kubelet reports it. */
export interface PodReceipt {
  /** Index key `<nodegroup>/<name>`. */
  deployment: string;
  /** Revision of the Pod payload the node published (see {@link podRevision}); null when none. */
  revision: string | null;
  /** kubelet's PodReady for that revision; null when unknown (no Pods API, or not seen yet). */
  ready: boolean | null;
  /** Container restarts kubelet counts for the Pod; null when unknown. */
  restarts: number | null;
  /** The last failure the agent or kubelet knows (e.g. `ImagePullBackOff: …`); null when none. */
  reason: string | null;
  /** RFC 3339 expiry of the Pod's workload identity; null when not issued. */
  identityExpiry: string | null;
}

/** One node's receipt: what it applied and what kubelet reports, at `time`. */
export interface NodeReceipt {
  schema: typeof RECEIPT_SCHEMA;
  nodegroup: string;
  /** The agent's node ID (`PODMIN_NODE_ID`; the host name by default). */
  node: string;
  agentVersion: string;
  /** ETag of the index the node applied; null before it applied one or when there is none. */
  indexEtag: string | null;
  /** RFC 3339 time the receipt was written. */
  time: string;
  /** How often the node rewrites an unchanged receipt, in seconds. */
  heartbeatSeconds: number;
  kubelet: KubeletState;
  /** Why the node's last pass failed as a whole (e.g. the index is unreadable); null when it did not. */
  error: string | null;
  /** Per deployment, sorted by key, at most {@link MAX_RECEIPT_PODS}. */
  pods: PodReceipt[];
  /** How many Pods were left off past {@link MAX_RECEIPT_PODS}. */
  omittedPods: number;
}

/** Raised for a receipt that is not exactly this schema. */
export class ReceiptFormatError extends PodminError {
  constructor(what: string, message: string, cause?: unknown) {
    super('INVALID_ARGUMENT', `reading ${what}: ${message}`, cause === undefined ? {} : { cause });
    this.name = 'ReceiptFormatError';
  }
}

const NODE_ID = /^[A-Za-z0-9._-]{1,63}$/;
const REVISION = /^[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** Whether `id` can be a node ID in a receipt key (the agent config's rule). */
export function isNodeId(id: string): boolean {
  return NODE_ID.test(id) && id !== '.' && id !== '..';
}

/** Object key of one node's receipt: `status/<nodegroup>/<node-id>.json`. */
export function receiptKey(nodegroup: string, nodeId: string): string {
  if (!isDns1123Label(nodegroup) || !isNodeId(nodeId)) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `naming the receipt of node ${JSON.stringify(nodeId)} in NodeGroup ${JSON.stringify(nodegroup)}: the NodeGroup must be a DNS-1123 label and the node ID 1-63 of a-z, A-Z, 0-9, '.', '_', '-'`,
    );
  }
  return `${RECEIPTS_PREFIX}${nodegroup}/${nodeId}.json`;
}

/** Listing prefix of a NodeGroup's receipts. */
export function receiptPrefix(nodegroup: string): string {
  return `${RECEIPTS_PREFIX}${nodegroup}/`;
}

/** The NodeGroup and node a receipt key names, or undefined for another key. */
export function parseReceiptKey(key: string): { nodegroup: string; node: string } | undefined {
  const m = /^status\/([^/]+)\/([^/]+)\.json$/.exec(key);
  if (!m) return undefined;
  const [, nodegroup, node] = m as unknown as [string, string, string];
  return isDns1123Label(nodegroup) && isNodeId(node) ? { nodegroup, node } : undefined;
}

/**
 * The revision of a deployment: the first {@link REVISION_LENGTH} hex characters of its Pod
 * payload's SHA-512, which the payload key names, so the CLI (from the index) and the agent
 * (from what it published) derive the same string without reading the payload.
 */
export function podRevision(podKey: string): string {
  const parts = parsePodKey(podKey);
  if (!parts) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `deriving a revision from ${podKey}: not a Pod payload key`,
    );
  }
  return parts.digest.slice(0, REVISION_LENGTH);
}

/**
 * A reason fit for a receipt: control characters become spaces (a reason is one line) and it
 * is cut to {@link MAX_REASON_CHARS}, so kubelet's long messages never grow the object.
 */
export function boundReason(reason: string): string {
  // eslint-disable-next-line no-control-regex -- replacing control characters is the point
  const line = reason.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line.length <= MAX_REASON_CHARS ? line : `${line.slice(0, MAX_REASON_CHARS - 1)}…`;
}

/**
 * Canonical receipt bytes: fixed field order, Pods sorted and capped, reasons bounded.
 * Throws if the result were ever over {@link MAX_RECEIPT_BYTES} (the caps make that impossible).
 */
export function serializeReceipt(receipt: NodeReceipt): string {
  const text = JSON.stringify(canonical(receipt), null, 1) + '\n';
  if (Buffer.byteLength(text) > MAX_RECEIPT_BYTES) {
    throw new PodminError(
      'INTERNAL',
      `writing the receipt of node ${receipt.node}: ${Buffer.byteLength(text)} bytes is over the ${MAX_RECEIPT_BYTES}-byte bound`,
    );
  }
  return text;
}

/** The receipt's content without its time: equal keys mean nothing worth a write changed. */
export function receiptChangeKey(receipt: NodeReceipt): string {
  return JSON.stringify({ ...canonical(receipt), time: '' });
}

/** Sorted, capped and bounded copy of a receipt, fields in schema order. */
function canonical(receipt: NodeReceipt): NodeReceipt {
  const sorted = [...receipt.pods].sort((a, b) =>
    a.deployment < b.deployment ? -1 : a.deployment > b.deployment ? 1 : 0,
  );
  const pods = sorted.slice(0, MAX_RECEIPT_PODS).map((p): PodReceipt => ({
    deployment: p.deployment,
    revision: p.revision,
    ready: p.ready,
    restarts: p.restarts,
    reason: p.reason === null ? null : boundReason(p.reason),
    identityExpiry: p.identityExpiry,
  }));
  return {
    schema: RECEIPT_SCHEMA,
    nodegroup: receipt.nodegroup,
    node: receipt.node,
    agentVersion: receipt.agentVersion.slice(0, 64),
    indexEtag: receipt.indexEtag,
    time: receipt.time,
    heartbeatSeconds: receipt.heartbeatSeconds,
    kubelet: receipt.kubelet,
    error: receipt.error === null ? null : boundReason(receipt.error),
    pods,
    omittedPods: receipt.omittedPods + (sorted.length - pods.length),
  };
}

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

/** How long after `time` a receipt counts as stale: {@link STALE_HEARTBEATS} heartbeats. */
export function staleAfterMs(receipt: Pick<NodeReceipt, 'heartbeatSeconds'>): number {
  return STALE_HEARTBEATS * receipt.heartbeatSeconds * 1000;
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
