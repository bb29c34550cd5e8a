import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey, type DesiredIndex } from '@podmin/util-desired-state';
import {
  entriesOf,
  isIndexCurrent,
  parsePodBytes,
  parseServiceBytes,
  readIndex,
  readIndexIfChanged,
  readPayload,
  versionOf,
  type IndexChange,
  type IndexVersion,
} from '@podmin/data-access-desired-state';
import { stringifyCanonical } from '@podmin/util-manifest';
import type { NodePaths } from './node-paths';
import {
  SERVICE_ANNOTATION,
  declaredSecrets,
  deploymentRevision,
  secretDir,
  transformPod,
  type PodObject,
} from './pod-transform';
import type {
  DesiredService,
  DesiredStateReader,
  IdentityIssuer,
  SecretProviderName,
  SecretSource,
  ServiceSink,
} from './staticpod.ports';

/** Static configuration of the reconciler. */
export interface ReconcilerOptions {
  cluster: string;
  nodegroup: string;
  nodeAddress: string;
  paths: NodePaths;
}

/** Health of the reconciler as reported to the supervisor. */
export interface ReconcileHealth {
  healthy: boolean;
  lastError: string | null;
  lastSuccess: Date | null;
  indexEtag: string | null;
  pods: string[];
}

/** Outcome of one pass. */
export type PassResult =
  { status: 'published'; changedFiles: number; removedFiles: number } | { status: 'unchanged' };

interface StagedPod {
  key: string;
  name: string;
  revision: string;
  yaml: string;
  secrets: Array<{ provider: SecretProviderName; key: string; value: Buffer }>;
  service: DesiredService | undefined;
}

const TEMP_PREFIX = '.podmin-tmp-';

/**
 * One NodeGroup's static-Pod reconciler: reads the index (conditional GET), fetches and
 * verifies only referenced payloads, stages the complete candidate set (secrets, identity),
 * confirms the index ETag is unchanged, then publishes files by same-directory atomic
 * rename, removes stale manifests and hands Services on. Any failure leaves the previously
 * published state in place and marks the reconciler unhealthy.
 */
export class StaticPodReconciler {
  /** Index version the current state was read at; undefined until read (or after a failed fence). */
  private indexVersion: IndexVersion | undefined = undefined;
  private index: DesiredIndex = {};
  private running = false;
  private readonly payloads = new Map<string, Buffer>();
  /** Revision whose secrets are on disk, per Pod (empty after boot: fetch on first load). */
  private readonly secretRevisions = new Map<string, string>();
  private published = new Map<string, string>();
  private health: ReconcileHealth = {
    healthy: false,
    lastError: 'not reconciled yet',
    lastSuccess: null,
    indexEtag: null,
    pods: [],
  };
  private needsPass = true;

  constructor(
    private readonly options: ReconcilerOptions,
    private readonly store: DesiredStateReader,
    private readonly secrets: SecretSource,
    private readonly identity: IdentityIssuer,
    private readonly services: ServiceSink,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Current health. */
  status(): ReconcileHealth {
    return { ...this.health, pods: [...this.health.pods] };
  }

  /**
   * Runs one reconciliation pass; throws (and reports unhealthy) on failure. `signal` cancels
   * it: every object read gets it and it is checked before every file write, so nothing is
   * written once it fires. Passes never overlap: a call while one runs is refused.
   */
  async reconcileOnce(signal?: AbortSignal): Promise<PassResult> {
    if (this.running) {
      throw new PodminError(
        'INTERNAL',
        'reconciling static Pods: a pass is still running; passes never overlap',
      );
    }
    this.running = true;
    try {
      const result = await this.pass(signal ?? new AbortController().signal);
      this.health = {
        healthy: true,
        lastError: null,
        lastSuccess: this.now(),
        indexEtag: this.indexEtag(),
        pods: [...this.published.keys()].sort(),
      };
      this.needsPass = false;
      return result;
    } catch (err) {
      this.needsPass = true;
      this.health = {
        ...this.health,
        healthy: false,
        lastError: err instanceof Error ? err.message : String(err),
      };
      throw err;
    } finally {
      this.running = false;
    }
  }

  /** The ETag health reports: '' for a missing index, null before the first read. */
  private indexEtag(): string | null {
    return this.indexVersion === undefined ? null : (this.indexVersion ?? '');
  }

  /** Reads the index (conditionally once a version is known); true when desired state changed. */
  private async readIndex(signal: AbortSignal): Promise<boolean> {
    const seen = this.indexVersion;
    const read: IndexChange =
      typeof seen === 'string'
        ? await readIndexIfChanged(this.store, seen, { signal })
        : await readIndex(this.store, { signal });
    if (read.status === 'unchanged') return false;
    // A missing index means empty desired state; still missing is no change.
    const version = versionOf(read);
    const changed = !(seen === null && version === null);
    this.index = entriesOf(read);
    this.indexVersion = version;
    return changed;
  }

  private async fetchPayload(key: string, signal: AbortSignal): Promise<Buffer> {
    const cached = this.payloads.get(key);
    if (cached) return cached;
    const body = await readPayload(this.store, key, { signal });
    this.payloads.set(key, body);
    return body;
  }

  private async pass(signal: AbortSignal): Promise<PassResult> {
    const indexChanged = await this.readIndex(signal);
    const fenceVersion = this.indexVersion ?? null;
    const mine = Object.entries(this.index).filter(
      ([key]) => parseDeploymentKey(key).nodegroup === this.options.nodegroup,
    );
    // Drop cached payloads no longer referenced, so memory stays bounded by the index.
    const referenced = new Set(mine.flatMap(([, e]) => [e.pod, ...(e.service ? [e.service] : [])]));
    for (const key of this.payloads.keys()) if (!referenced.has(key)) this.payloads.delete(key);

    const staged: StagedPod[] = [];
    for (const [key, entry] of mine) {
      // The same strict parser and validator the CLI deploys with; payloads are never trusted raw.
      const payload = parsePodBytes(entry.pod, await this.fetchPayload(entry.pod, signal));
      const pod = payload.pod as unknown as PodObject;
      const { name, namespace } = payload;
      let service: DesiredService | undefined;
      if (entry.service) {
        const parsed = parseServiceBytes(
          entry.service,
          await this.fetchPayload(entry.service, signal),
        );
        service = {
          namespace: parsed.namespace,
          name: parsed.name,
          owner: key,
          object: parsed.object,
        };
      }
      const revision = deploymentRevision(entry.pod, entry.service);
      const declared = declaredSecrets(pod);
      const secrets: StagedPod['secrets'] = [];
      if (this.secretRevisions.get(name) !== revision) {
        for (const [provider, keys] of declared) {
          for (const secretKey of keys) {
            const value = await this.secrets.fetch(
              provider,
              `/${this.options.cluster}/${namespace}/${name}/${secretKey}`,
            );
            signal.throwIfAborted();
            secrets.push({ provider, key: secretKey, value });
          }
        }
      }
      const serviceName = pod.metadata.annotations?.[SERVICE_ANNOTATION];
      const { fingerprint } = await this.identity.ensure({
        pod: name,
        namespace,
        ...(serviceName ? { service: serviceName } : {}),
      });
      signal.throwIfAborted();
      const transformed = transformPod({
        pod,
        revision,
        identityFingerprint: fingerprint,
        root: this.options.paths.root,
        workloads: this.options.paths.workloads,
        nodeAddress: this.options.nodeAddress,
        secretProviders: [...declared.keys()],
      });
      staged.push({ key, name, revision, yaml: stringifyCanonical(transformed), secrets, service });
    }
    const names = staged.map((s) => s.name);
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate)
      throw new PodminError(
        'INVALID_MANIFEST',
        `staging NodeGroup ${this.options.nodegroup}: two deployments publish the Pod name ${duplicate}`,
      );

    // Fence: publish only if the index we staged from is still the committed one.
    if (!(await isIndexCurrent(this.store, fenceVersion, { signal }))) {
      this.indexVersion = undefined;
      throw new PodminError(
        'PRECONDITION_FAILED',
        fenceVersion === null
          ? 'publishing static Pods: an index appeared while staging; retrying'
          : 'publishing static Pods: the desired-state index changed while staging; retrying',
      );
    }

    if (
      !indexChanged &&
      staged.every((s) => this.published.get(s.name) === s.yaml) &&
      this.published.size === staged.length
    ) {
      return { status: 'unchanged' };
    }
    return this.publish(staged, signal);
  }

  private async publish(staged: StagedPod[], signal: AbortSignal): Promise<PassResult> {
    const { manifests, workloads } = this.options.paths;
    signal.throwIfAborted();
    await fs.mkdir(manifests, { recursive: true, mode: 0o755 });
    let changedFiles = 0;
    // Secrets first (new revision directories), so a published Pod never names missing files.
    const written: Array<{ pod: string; dir: string; previous: string | undefined }> = [];
    const next = new Map<string, string>();
    try {
      for (const pod of staged) {
        if (pod.secrets.length === 0) continue;
        const dir = path.join(workloads, pod.name, 'secrets', pod.revision);
        written.push({ pod: pod.name, dir, previous: this.secretRevisions.get(pod.name) });
        for (const s of pod.secrets) {
          const providerDir = secretDir(workloads, pod.name, pod.revision, s.provider);
          signal.throwIfAborted();
          await fs.mkdir(providerDir, { recursive: true, mode: 0o755 });
          await writeAtomic(path.join(providerDir, s.key), s.value, 0o444, signal);
        }
        this.secretRevisions.set(pod.name, pod.revision);
      }
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
        if (w.previous === undefined) this.secretRevisions.delete(w.pod);
        else this.secretRevisions.set(w.pod, w.previous);
      }
      throw err;
    }
    // Podmin owns the directory: every other *.yaml is stale.
    signal.throwIfAborted();
    let removedFiles = 0;
    for (const entry of await fs.readdir(manifests)) {
      const podName = entry.slice(0, -'.yaml'.length);
      if (entry.endsWith('.yaml') && !next.has(podName)) {
        await fs.rm(path.join(manifests, entry), { force: true });
        removedFiles++;
      } else if (entry.startsWith(TEMP_PREFIX)) {
        await fs.rm(path.join(manifests, entry), { force: true });
      }
    }
    this.published = next;
    signal.throwIfAborted();
    await this.cleanWorkloads(staged);
    signal.throwIfAborted();
    await this.services.publish(staged.flatMap((s) => (s.service ? [s.service] : [])));
    return { status: 'published', changedFiles, removedFiles };
  }

  private async cleanWorkloads(staged: StagedPod[]): Promise<void> {
    const { workloads } = this.options.paths;
    const current = new Map(staged.map((s) => [s.name, s.revision]));
    let entries: string[] = [];
    try {
      entries = await fs.readdir(workloads);
    } catch {
      return;
    }
    for (const pod of entries) {
      const revision = current.get(pod);
      if (revision === undefined) {
        await this.identity.remove(pod);
        await fs.rm(path.join(workloads, pod), { recursive: true, force: true });
        this.secretRevisions.delete(pod);
        continue;
      }
      const secretsRoot = path.join(workloads, pod, 'secrets');
      for (const old of await fs.readdir(secretsRoot).catch(() => [] as string[])) {
        if (old !== revision)
          await fs.rm(path.join(secretsRoot, old), { recursive: true, force: true });
      }
    }
  }

  /** Whether the next poll must run a full pass even if the index is unchanged. */
  get pending(): boolean {
    return this.needsPass;
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
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
async function writeAtomic(
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
