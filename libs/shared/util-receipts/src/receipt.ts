import { PodminError } from '@podmin/util-errors';
import { isDns1123Label } from '@podmin/util-manifest';
import { parsePodKey } from '@podmin/util-desired-state';

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

const NODE_ID = /^[A-Za-z0-9._-]{1,63}$/;

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

/** How long after `time` a receipt counts as stale: {@link STALE_HEARTBEATS} heartbeats. */
export function staleAfterMs(receipt: Pick<NodeReceipt, 'heartbeatSeconds'>): number {
  return STALE_HEARTBEATS * receipt.heartbeatSeconds * 1000;
}
