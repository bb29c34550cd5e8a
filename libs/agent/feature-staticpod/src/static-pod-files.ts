import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  DEPLOYMENT_ANNOTATION,
  POD_PAYLOAD_ANNOTATION,
  REVISION_ANNOTATION,
  SERVICE_PAYLOAD_ANNOTATION,
  type PodObject,
} from './pod-transform';
import type { Slot } from './rollout/node-rollout';

// The files of the static-Pod directory and the workloads tree: atomic writes, modes and
// owners, and what a manifest directory already holds (moved out of reconciler.ts unchanged).

/** Prefix of the temporary files {@link writeAtomic} renames into place. */
export const TEMP_PREFIX = '.podmin-tmp-';

/** Mode of the workloads root and of each Pod's directory: no other host user lists or enters them. */
export const PRIVATE_DIR_MODE = 0o700;

/** The uid/gid a Pod's securityContext runs it as, if it names either (fsGroup wins for the group). */
export function podOwner(pod: PodObject): { uid: number; gid: number } | undefined {
  const context = pod.spec['securityContext'] as Record<string, unknown> | undefined;
  const id = (v: unknown): number | undefined =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
  const uid = id(context?.['runAsUser']);
  const gid = id(context?.['fsGroup']) ?? id(context?.['runAsGroup']);
  if (uid === undefined && gid === undefined) return undefined;
  return { uid: uid ?? 0, gid: gid ?? 0 };
}

/**
 * Makes a Pod's directory 0700 (the files below stay 0444: the Pod reaches them through its own
 * bind mount, never through this directory, so no other host user can list or read them) and,
 * where the Pod names its user or group and the agent may chown (root on a node), owns the
 * secret and identity files below as that user and group.
 */
export async function securePodFiles(
  podDir: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  try {
    await fs.chmod(podDir, PRIVATE_DIR_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (owner === undefined || process.getuid?.() !== 0) return;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      await fs.chown(p, owner.uid, owner.gid);
      if (entry.isDirectory()) await walk(p);
    }
  };
  await walk(podDir);
}

/** Whether the static-Pod directory holds any published manifest (Pods from an earlier index). */
export async function hasPublishedManifests(manifests: string): Promise<boolean> {
  try {
    return (await fs.readdir(manifests)).some((e) => e.endsWith('.yaml'));
  } catch {
    return false;
  }
}

/** The file's text, or undefined when it cannot be read. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Same-directory temp file, fsync, rename: readers see the old or the new file, never a part.
 * A fired `signal` stops it before the live path changes.
 */
export async function writeAtomic(
  file: string,
  data: Buffer,
  mode: number,
  signal: AbortSignal,
): Promise<void> {
  signal.throwIfAborted();
  const tmp = path.join(
    path.dirname(file),
    `${TEMP_PREFIX}${path.basename(file)}.${randomBytes(6).toString('hex')}`,
  );
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data, { signal });
    await handle.chmod(mode);
    await handle.sync();
    signal.throwIfAborted();
  } catch (err) {
    await handle.close();
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** The static Pods in the manifest directory that name their deployment and payloads, by deployment. */
export async function publishedSlots(
  manifests: string,
  nowMs: number,
): Promise<Map<string, Slot[]>> {
  const out = new Map<string, Slot[]>();
  let entries: string[] = [];
  try {
    entries = await fs.readdir(manifests);
  } catch {
    return out;
  }
  for (const entry of entries.sort()) {
    if (!entry.endsWith('.yaml') || entry.startsWith(TEMP_PREFIX)) continue;
    let pod: PodObject | undefined;
    try {
      pod = parseYaml(await fs.readFile(path.join(manifests, entry), 'utf8')) as PodObject;
    } catch {
      continue;
    }
    const a = pod?.metadata?.annotations ?? {};
    const deployment = a[DEPLOYMENT_ANNOTATION];
    const podKey = a[POD_PAYLOAD_ANNOTATION];
    const revision = a[REVISION_ANNOTATION];
    if (deployment === undefined || podKey === undefined || revision === undefined) continue;
    const slot: Slot = {
      pod: podKey,
      service: a[SERVICE_PAYLOAD_ANNOTATION],
      staticName: pod.metadata.name,
      revision,
      sinceMs: nowMs,
    };
    out.set(deployment, [...(out.get(deployment) ?? []), slot]);
  }
  return out;
}
