import type { ListedObject, ObjectStore } from '@podmin/data-access-object-store';
import { hasCode } from '@podmin/util-errors';
import {
  DEFAULT_HEARTBEAT_MS,
  MAX_RECEIPT_BYTES,
  RECEIPTS_PREFIX,
  STALE_HEARTBEATS,
  parseReceipt,
  parseReceiptKey,
  receiptPrefix,
  staleAfterMs,
} from '@podmin/util-receipts';
import type { ReceiptRead } from './status';

/** How long `podmin status` keeps showing a node after its last receipt: 24 hours. */
export const DEFAULT_RECEIPT_RETENTION_MS = 24 * 3_600_000;

/**
 * The shortest retention window: three default heartbeats, when a receipt turns stale. A
 * shorter window would hide (and `--prune` delete) the receipts of live nodes.
 */
export const MIN_RECEIPT_RETENTION_MS = STALE_HEARTBEATS * DEFAULT_HEARTBEAT_MS;

/**
 * Whether a receipt has outlived the retention window: stored more than `retentionMs` ago
 * and, when it parses, also stale by its own heartbeat, so a live node's receipt never is
 * (a node with a long heartbeat keeps its receipt until it is stale by that heartbeat).
 */
export function isExpiredReceipt(read: ReceiptRead, now: Date, retentionMs: number): boolean {
  const ageMs = now.getTime() - read.lastModified.getTime();
  if (ageMs <= retentionMs) return false;
  return !read.ok || ageMs > staleAfterMs(read.receipt);
}

/** The receipts still within the window, and the nodes of those that are not. */
export function splitByRetention(
  reads: readonly ReceiptRead[],
  now: Date,
  retentionMs: number,
): { kept: ReceiptRead[]; dropped: ReceiptRead[] } {
  const kept: ReceiptRead[] = [];
  const dropped: ReceiptRead[] = [];
  for (const read of reads) (isExpiredReceipt(read, now, retentionMs) ? dropped : kept).push(read);
  return { kept, dropped };
}

/** One receipt `podmin status --prune` deleted. */
export interface PrunedReceipt {
  /** `status/<nodegroup>/<node-id>.json`. */
  key: string;
  nodegroup: string;
  node: string;
  /** Milliseconds since the bucket stored it, when it was deleted. */
  ageMs: number;
}

/** Options of {@link pruneReceipts}. */
export interface PruneOptions {
  retentionMs: number;
  /** Only this NodeGroup's receipts (default: every NodeGroup's). */
  nodegroup?: string;
  now?: () => Date;
}

/**
 * `podmin status --prune`: deletes the receipts that outlived the retention window (see
 * {@link isExpiredReceipt}), in key order. Each is read first (a parseable one must be stale
 * by its own heartbeat) and looked up again right before its delete: one a node rewrote in
 * between (its ETag or time changed) is kept. Keys under `status/` that are not receipt keys
 * are not podmin's to delete and are left alone. Returns what it deleted.
 */
export async function pruneReceipts(
  store: Pick<ObjectStore, 'list' | 'get' | 'head' | 'delete'>,
  options: PruneOptions,
): Promise<PrunedReceipt[]> {
  const now = (options.now ?? (() => new Date()))();
  const prefix =
    options.nodegroup === undefined ? RECEIPTS_PREFIX : receiptPrefix(options.nodegroup);
  const listed: ListedObject[] = [];
  let token: string | undefined;
  do {
    const page = await store.list(prefix, token);
    listed.push(...page.objects);
    token = page.nextToken;
  } while (token !== undefined);
  const pruned: PrunedReceipt[] = [];
  for (const object of listed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    const ref = parseReceiptKey(object.key);
    if (ref === undefined) continue;
    if (now.getTime() - object.lastModified.getTime() <= options.retentionMs) continue;
    let read: ReceiptRead;
    try {
      const { body } = await store.get(object.key, { maxBytes: MAX_RECEIPT_BYTES });
      read = {
        node: ref.node,
        ok: true,
        receipt: parseReceipt(body, ref),
        lastModified: object.lastModified,
      };
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND')) continue;
      if (hasCode(err, 'ACCESS_DENIED') || hasCode(err, 'BUCKET_UNAVAILABLE')) throw err;
      read = { node: ref.node, ok: false, error: String(err), lastModified: object.lastModified };
    }
    if (!isExpiredReceipt(read, now, options.retentionMs)) continue;
    let head;
    try {
      head = await store.head(object.key);
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND')) continue;
      throw err;
    }
    // A node that came back rewrote it after the listing: it is live again, keep it.
    if (head.etag !== object.etag || head.lastModified.getTime() !== object.lastModified.getTime())
      continue;
    await store.delete(object.key);
    pruned.push({
      key: object.key,
      nodegroup: ref.nodegroup,
      node: ref.node,
      ageMs: now.getTime() - object.lastModified.getTime(),
    });
  }
  return pruned;
}
