import fs from 'node:fs/promises';
import path from 'node:path';
import { secretDir } from './pod-transform';
import type { NodePaths } from './node-paths';
import type { PassResult } from './reconcile-outcome';
import {
  PRIVATE_DIR_MODE,
  TEMP_PREFIX,
  readIfExists,
  securePodFiles,
  writeAtomic,
} from './static-pod-files';
import type {
  DesiredService,
  IdentityIssuer,
  SecretProviderName,
  ServiceSink,
} from './staticpod.ports';

/** One deployment's Pod as a pass staged it, ready to publish. */
export interface StagedPod {
  key: string;
  /** Its static Pod name (manifest file); the Pod's own name unless it is a surge Pod. */
  name: string;
  /** The Pod's own name: its workload directory, identity and secret paths. */
  podName: string;
  /** The Pod payload it was staged from. */
  payloadKey: string;
  /** The Service payload it was staged with, if any. */
  servicePayload: string | undefined;
  revision: string;
  namespace: string;
  /** Revision of the Pod payload ({@link podRevision}), as receipts report it. */
  payloadRevision: string;
  identityExpiry: string | undefined;
  yaml: string;
  secrets: Array<{ provider: SecretProviderName; key: string; value: Buffer }>;
  service: DesiredService | undefined;
  /** Who the Pod runs as (its securityContext), when it says: its files are owned so. */
  owner: { uid: number; gid: number } | undefined;
}

/**
 * The reconciler's static-Pod publisher: writes a staged Pod set to the node (secrets first, then
 * manifests by same-directory atomic rename), removes stale manifests and workloads, and hands the
 * Services on. It remembers what it published and which secret revisions are on disk.
 */
export class StaticPodPublisher {
  /** `<pod>/<revision>` whose secrets are on disk (empty after boot: fetch on first load). */
  readonly secretsOnDisk = new Set<string>();
  /** Manifest text by static Pod name, as last published. */
  published = new Map<string, string>();

  constructor(
    private readonly paths: NodePaths,
    private readonly identity: IdentityIssuer,
    private readonly services: ServiceSink,
  ) {}

  /** Publishes `staged`; `removeStale` also removes manifests and workloads no longer staged. */
  async publish(
    staged: StagedPod[],
    signal: AbortSignal,
    removeStale: boolean,
  ): Promise<PassResult> {
    const { manifests, workloads } = this.paths;
    signal.throwIfAborted();
    await fs.mkdir(manifests, { recursive: true, mode: 0o755 });
    await fs.mkdir(workloads, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.chmod(workloads, PRIVATE_DIR_MODE);
    let changedFiles = 0;
    // Secrets first (new revision directories), so a published Pod never names missing files.
    const written: Array<{ pod: string; dir: string; marker: string }> = [];
    const next = new Map<string, string>();
    try {
      for (const pod of staged) {
        if (pod.secrets.length === 0) continue;
        const dir = path.join(workloads, pod.podName, 'secrets', pod.revision);
        const marker = `${pod.podName}/${pod.revision}`;
        written.push({ pod: pod.name, dir, marker });
        for (const s of pod.secrets) {
          const providerDir = secretDir(workloads, pod.podName, pod.revision, s.provider);
          signal.throwIfAborted();
          await fs.mkdir(providerDir, { recursive: true, mode: 0o755 });
          await writeAtomic(path.join(providerDir, s.key), s.value, 0o444, signal);
        }
        this.secretsOnDisk.add(marker);
      }
      for (const pod of staged) await securePodFiles(path.join(workloads, pod.podName), pod.owner);
      for (const pod of staged) {
        const file = path.join(manifests, `${pod.name}.yaml`);
        next.set(pod.name, pod.yaml);
        if ((await readIfExists(file)) === pod.yaml) continue;
        await writeAtomic(file, Buffer.from(pod.yaml), 0o644, signal);
        changedFiles++;
      }
    } catch (err) {
      // Undo staged secret revisions no published Pod refers to; the live files stay as they were.
      for (const w of written) {
        const live = await readIfExists(path.join(manifests, `${w.pod}.yaml`));
        if (live !== undefined && live.includes(w.dir)) continue;
        await fs.rm(w.dir, { recursive: true, force: true });
        this.secretsOnDisk.delete(w.marker);
      }
      throw err;
    }
    // Podmin owns the directory: every other *.yaml is stale.
    signal.throwIfAborted();
    let removedFiles = 0;
    for (const entry of await fs.readdir(manifests)) {
      const podName = entry.slice(0, -'.yaml'.length);
      if (entry.endsWith('.yaml') && !next.has(podName) && removeStale) {
        await fs.rm(path.join(manifests, entry), { force: true });
        removedFiles++;
      } else if (entry.startsWith(TEMP_PREFIX)) {
        await fs.rm(path.join(manifests, entry), { force: true });
      }
    }
    this.published = next;
    signal.throwIfAborted();
    if (removeStale) await this.cleanWorkloads(staged);
    signal.throwIfAborted();
    await this.services.publish(staged.flatMap((s) => (s.service ? [s.service] : [])));
    return { status: 'published', changedFiles, removedFiles };
  }

  private async cleanWorkloads(staged: StagedPod[]): Promise<void> {
    const { workloads } = this.paths;
    const current = new Map<string, Set<string>>();
    for (const s of staged)
      current.set(s.podName, (current.get(s.podName) ?? new Set()).add(s.revision));
    let entries: string[] = [];
    try {
      entries = await fs.readdir(workloads);
    } catch {
      return;
    }
    for (const pod of entries) {
      const revisions = current.get(pod);
      if (revisions === undefined) {
        await this.identity.remove(pod);
        await fs.rm(path.join(workloads, pod), { recursive: true, force: true });
        for (const marker of [...this.secretsOnDisk])
          if (marker.startsWith(`${pod}/`)) this.secretsOnDisk.delete(marker);
        continue;
      }
      const secretsRoot = path.join(workloads, pod, 'secrets');
      for (const old of await fs.readdir(secretsRoot).catch(() => [] as string[])) {
        if (!revisions.has(old)) {
          await fs.rm(path.join(secretsRoot, old), { recursive: true, force: true });
          this.secretsOnDisk.delete(`${pod}/${old}`);
        }
      }
    }
  }
}
