import pLimit from 'p-limit';
import type { ListedObject, ObjectStore } from '@podmin/data-access-object-store';
import { entriesOf, readIndex } from '@podmin/data-access-desired-state';
import { PodminError, hasCode } from '@podmin/util-errors';
import { UNTRUSTED_PREFIX } from '@podmin/util-trust';
import { parseDeploymentKey, type DesiredIndex } from '@podmin/util-desired-state';
import {
  DEFAULT_HEARTBEAT_MS,
  MAX_RECEIPT_BYTES,
  STALE_HEARTBEATS,
  parseReceipt,
  parseReceiptKey,
  podRevision,
  receiptPrefix,
  staleAfterMs,
  type KubeletState,
  type NodeReceipt,
} from '@podmin/util-receipts';
import type { DeploymentRollout, RolloutHalt, RolloutState } from '@podmin/util-rollout';
import { readRolloutStateForDisplay } from './rollout-state';
import { splitByRetention } from './receipt-retention';

/** The bucket reads `status` and `deploy --wait` make: the index, receipt listings and receipts. */
export type StatusStore = Pick<ObjectStore, 'get' | 'list'>;

/** Receipt reads in flight at once. */
export const RECEIPT_READ_CONCURRENCY = 16;

/** Where one node stands with one deployment. */
export type NodeState =
  /** Applied the desired revision and kubelet reports it Ready. */
  | 'ready'
  /** Applied the desired revision; kubelet reports it not Ready (yet). */
  | 'not-ready'
  /** Applied the desired revision; Ready is unknown (no kubelet Pods API). */
  | 'applied'
  /** Has not applied the desired revision (yet). */
  | 'pending'
  /** Its receipt is older than three heartbeats: the node is not counted. */
  | 'stale'
  /** Its receipt could not be read or is malformed: shown, never counted. */
  | 'error';

/** One node's row for one deployment. */
export interface NodeStatus {
  node: string;
  state: NodeState;
  /** Revision the node published for the deployment; null when none. */
  applied: string | null;
  /** kubelet's Ready for it; null when unknown. */
  ready: boolean | null;
  restarts: number | null;
  /** What the node reports as the last failure, or why its receipt is unusable. */
  reason: string | null;
  kubelet: KubeletState | null;
  /** Milliseconds since the bucket stored the receipt. */
  ageMs: number;
}

/** One deployment across its NodeGroup's nodes. */
export interface DeploymentStatus {
  /** Index key `<nodegroup>/<name>`. */
  key: string;
  name: string;
  nodegroup: string;
  /** Desired revision, from the index entry's Pod payload key. */
  desired: string;
  nodes: NodeStatus[];
  /** Live nodes (not stale, receipt readable) and how many of them are Ready on `desired`. */
  live: number;
  ready: number;
  /** How far the rollout to `desired` got, and whether it is paused or halted. */
  rollout: RolloutProgress;
  /** Nodes of the NodeGroup left out because their receipt outlived the retention window. */
  dropped: number;
}

/** A deployment's rollout toward its desired revision, in waves of nodes. */
export interface RolloutProgress {
  /** The target revision (the index entry's Pod, first 12 hex). */
  target: string;
  /** Live nodes that applied the target revision. */
  updated: number;
  /** Of those, the ones kubelet reports Ready. */
  available: number;
  /** Live nodes of the NodeGroup. */
  total: number;
  /** `podmin rollout pause` holds it: no new node moves. */
  paused: boolean;
  /** Why it stopped admitting nodes; null unless the rollout state says it is halted on this target. */
  halted: RolloutHalt | null;
}

/**
 * The rollout's counts from the nodes' rows for `target`, with `paused` and `halted` from the
 * deployment's rollout state (a halt counts only when it is of `pod`, the target's payload: a
 * halt of a superseded revision is history).
 */
export function rolloutProgress(
  target: string,
  nodes: readonly NodeStatus[],
  rollout?: DeploymentRollout,
  pod?: string,
): RolloutProgress {
  const live = nodes.filter((n) => n.state !== 'stale' && n.state !== 'error');
  const updated = live.filter((n) => n.applied === target);
  return {
    target,
    updated: updated.length,
    available: updated.filter((n) => n.ready === true).length,
    total: live.length,
    paused: rollout?.paused ?? false,
    halted: rollout !== undefined && rollout.target === pod ? rollout.halted : null,
  };
}

/** One node's receipt as read from the bucket, or why it could not be. */
export type ReceiptRead =
  | { node: string; ok: true; receipt: NodeReceipt; lastModified: Date }
  | { node: string; ok: false; error: string; lastModified: Date };

/** Options of {@link readStatus}. */
export interface StatusOptions {
  /** Only this deployment name (in every NodeGroup unless `nodegroup` is given). */
  name?: string;
  nodegroup?: string;
  now?: () => Date;
  concurrency?: number;
  /** Told when the rollout state is malformed (it is then left out, not fatal). */
  warn?: (message: string) => void;
  /**
   * Leave out the nodes whose receipt outlived this window (see `isExpiredReceipt`); counted
   * in each deployment's `dropped`. Default: every node is shown.
   */
  retentionMs?: number;
}

/** {@link readStatus}'s deployments and the receipts the retention window left out. */
export interface StatusReport {
  deployments: DeploymentStatus[];
  /** One per node left out, across the NodeGroups read, by NodeGroup and node. */
  dropped: Array<{ nodegroup: string; node: string; ageMs: number }>;
}

/**
 * Every receipt under `status/<nodegroup>/` (all listing pages), read with bounded concurrency
 * and parsed strictly. A receipt that is malformed, too large or unreadable becomes an error
 * row for its node; one deleted between listing and read is left out.
 */
export async function readReceipts(
  store: StatusStore,
  nodegroup: string,
  concurrency = RECEIPT_READ_CONCURRENCY,
): Promise<ReceiptRead[]> {
  const listed: ListedObject[] = [];
  let token: string | undefined;
  do {
    const page = await store.list(receiptPrefix(nodegroup), token);
    listed.push(...page.objects);
    token = page.nextToken;
  } while (token !== undefined);
  const limit = pLimit(Math.max(1, concurrency));
  const reads = await Promise.all(
    listed.map((object) =>
      limit(async (): Promise<ReceiptRead | undefined> => {
        const ref = parseReceiptKey(object.key);
        const node = ref?.node ?? object.key.slice(receiptPrefix(nodegroup).length);
        if (!ref || ref.nodegroup !== nodegroup) {
          return {
            node,
            ok: false,
            error: `${object.key} is not a receipt key (status/<nodegroup>/<node-id>.json)`,
            lastModified: object.lastModified,
          };
        }
        try {
          const { body } = await store.get(object.key, { maxBytes: MAX_RECEIPT_BYTES });
          return {
            node,
            ok: true,
            receipt: parseReceipt(body, ref),
            lastModified: object.lastModified,
          };
        } catch (err) {
          if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
          // Access or network trouble is the whole command's problem, not one node's.
          if (hasCode(err, 'ACCESS_DENIED') || hasCode(err, 'BUCKET_UNAVAILABLE')) throw err;
          return {
            node,
            ok: false,
            error: `malformed receipt ${object.key}: ${err instanceof Error ? err.message : String(err)}`,
            lastModified: object.lastModified,
          };
        }
      }),
    ),
  );
  return reads
    .filter((r): r is ReceiptRead => r !== undefined)
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

/** What a node reports for one deployment against a target revision (null: it must be gone). */
export function nodeStatus(
  read: ReceiptRead,
  key: string,
  target: string | null,
  now: Date,
): NodeStatus {
  const ageMs = Math.max(0, now.getTime() - read.lastModified.getTime());
  if (!read.ok) {
    return {
      node: read.node,
      state: 'error',
      applied: null,
      ready: null,
      restarts: null,
      reason: read.error,
      kubelet: null,
      ageMs,
    };
  }
  const { receipt } = read;
  const pod = receipt.pods.find((p) => p.deployment === key);
  const base = {
    node: read.node,
    applied: pod?.revision ?? null,
    ready: pod?.ready ?? null,
    restarts: pod?.restarts ?? null,
    // A node refusing the committed index says so before any Pod's reason: it applies nothing.
    reason: receipt.error?.startsWith(UNTRUSTED_PREFIX)
      ? receipt.error
      : (pod?.reason ?? receipt.error),
    kubelet: receipt.kubelet,
    ageMs,
  };
  if (ageMs > staleAfterMs(receipt)) return { ...base, state: 'stale' };
  if (target === null) return { ...base, state: pod === undefined ? 'ready' : 'pending' };
  if (pod === undefined && receipt.omittedPods > 0) {
    return {
      ...base,
      state: 'pending',
      reason: base.reason ?? `the receipt left off ${receipt.omittedPods} Pods`,
    };
  }
  if (base.applied !== target) return { ...base, state: 'pending' };
  if (base.ready === true) return { ...base, state: 'ready' };
  return { ...base, state: base.ready === false ? 'not-ready' : 'applied' };
}

/**
 * The deployment's rows for `target` and its live/ready counts, and its rollout (with the
 * deployment's rollout state and `pod`, the target's payload key, when known).
 */
export function deploymentStatus(
  key: string,
  target: string,
  receipts: readonly ReceiptRead[],
  now: Date,
  rollout?: DeploymentRollout,
  pod?: string,
  dropped = 0,
): DeploymentStatus {
  const { nodegroup, name } = parseDeploymentKey(key);
  const nodes = receipts.map((r) => nodeStatus(r, key, target, now));
  const live = nodes.filter((n) => n.state !== 'stale' && n.state !== 'error').length;
  const ready = nodes.filter((n) => n.state === 'ready').length;
  return {
    key,
    name,
    nodegroup,
    desired: target,
    nodes,
    live,
    ready,
    rollout: rolloutProgress(target, nodes, rollout, pod),
    dropped,
  };
}

/**
 * `podmin status`: the desired revision of each selected deployment (from the index) beside
 * what every node of its NodeGroup reports in its receipt, and its rollout. Reads only the
 * bucket: the index, the rollout state, one listing per NodeGroup and each receipt once.
 */
export async function readStatus(
  store: StatusStore,
  options: StatusOptions = {},
): Promise<DeploymentStatus[]> {
  return (await readStatusReport(store, options)).deployments;
}

/**
 * {@link readStatus} with the nodes the retention window left out (`options.retentionMs`),
 * for `podmin status` to say how many it hides.
 */
export async function readStatusReport(
  store: StatusStore,
  options: StatusOptions = {},
): Promise<StatusReport> {
  const now = (options.now ?? (() => new Date()))();
  const index: DesiredIndex = entriesOf(await readIndex(store));
  const keys = Object.keys(index)
    .filter((key) => {
      const ref = parseDeploymentKey(key);
      return (
        (options.name === undefined || ref.name === options.name) &&
        (options.nodegroup === undefined || ref.nodegroup === options.nodegroup)
      );
    })
    .sort();
  if (keys.length === 0 && (options.name !== undefined || options.nodegroup !== undefined)) {
    const what =
      options.name === undefined
        ? `NodeGroup ${options.nodegroup ?? ''}`
        : options.nodegroup === undefined
          ? options.name
          : `${options.nodegroup}/${options.name}`;
    throw new PodminError(
      'NOT_FOUND',
      `reading the status of ${what}: no such deployment in the desired-state index`,
      {
        hint: 'run `podmin list` to see committed deployments',
      },
    );
  }
  const nodegroups = [...new Set(keys.map((k) => parseDeploymentKey(k).nodegroup))];
  const receipts = new Map<string, ReceiptRead[]>();
  const droppedBy = new Map<string, ReceiptRead[]>();
  for (const ng of nodegroups) {
    const reads = await readReceipts(store, ng, options.concurrency);
    const { kept, dropped } =
      options.retentionMs === undefined
        ? { kept: reads, dropped: [] }
        : splitByRetention(reads, now, options.retentionMs);
    receipts.set(ng, kept);
    droppedBy.set(ng, dropped);
  }
  const rollouts: RolloutState | undefined =
    keys.length === 0 ? undefined : await readRolloutStateForDisplay(store, options.warn);
  const deployments = keys.map((key) => {
    const pod = index[key]?.pod ?? '';
    const { nodegroup } = parseDeploymentKey(key);
    return deploymentStatus(
      key,
      podRevision(pod),
      receipts.get(nodegroup) ?? [],
      now,
      rollouts?.deployments[key],
      pod,
      droppedBy.get(nodegroup)?.length ?? 0,
    );
  });
  const dropped = nodegroups.flatMap((nodegroup) =>
    (droppedBy.get(nodegroup) ?? []).map((r) => ({
      nodegroup,
      node: r.node,
      ageMs: Math.max(0, now.getTime() - r.lastModified.getTime()),
    })),
  );
  return { deployments, dropped };
}

/** A receipt older than this (the agent's default heartbeat times three) counts as stale. */
export const DEFAULT_STALE_MS = STALE_HEARTBEATS * DEFAULT_HEARTBEAT_MS;
