import type { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { receiptKey, serializeReceipt, type PodReceipt } from '@podmin/util-receipts';

/** A Ready Pod of `default/web` at `revision` as a receipt lists it, with `over` applied. */
export function readyPod(revision: string, over: Partial<PodReceipt> = {}): PodReceipt {
  return {
    deployment: 'default/web',
    revision,
    ready: true,
    restarts: 0,
    reason: null,
    identityExpiry: null,
    ...over,
  };
}

/** Writes a receipt for `node` as its agent would. */
export async function writeReceipt(
  store: LocalDirectoryObjectStore,
  node: string,
  pods: PodReceipt[],
  over: { heartbeatSeconds?: number; kubelet?: 'ok' | 'absent'; error?: string } = {},
): Promise<void> {
  await store.put(
    receiptKey('default', node),
    serializeReceipt({
      schema: 1,
      nodegroup: 'default',
      node,
      agentVersion: '1.0.0',
      indexEtag: null,
      time: new Date().toISOString(),
      heartbeatSeconds: over.heartbeatSeconds ?? 300,
      kubelet: over.kubelet ?? 'ok',
      error: over.error ?? null,
      pods,
      omittedPods: 0,
    }),
  );
}

/** Every key and ETag in the bucket, to show a command changed nothing. */
export async function snapshot(store: LocalDirectoryObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const prefix of ['deployments/', 'nodegroups/', 'status/']) {
    for (const o of (await store.list(prefix)).objects) out.push(`${o.key} ${o.etag}`);
  }
  return out;
}
