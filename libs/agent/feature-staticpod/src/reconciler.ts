import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import {
  INDEX_KEY,
  parseDeploymentKey,
  type DesiredIndex,
  type IndexEntry,
} from '@podmin/util-desired-state';
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
import { podRevision } from '@podmin/util-receipts';
import type { NodePaths } from './node-paths';
import { parse as parseYaml } from 'yaml';
import { strategyOf, type Admission, type NodeDeploymentReport } from '@podmin/util-rollout';
import { kubeletReason, type KubeletReport, type KubeletView } from './receipts/receipt-writer';
import { NodeRollouts, type Slot, type SlotHealth } from './rollout/node-rollout';
import {
  DEPLOYMENT_ANNOTATION,
  POD_PAYLOAD_ANNOTATION,
  REVISION_ANNOTATION,
  SERVICE_ANNOTATION,
  SERVICE_PAYLOAD_ANNOTATION,
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
  /**
   * How long an index that disappeared after the node saw one must stay missing before it counts
   * as empty desired state (default {@link MISSING_INDEX_GRACE_MS}).
   */
  missingIndexGraceMs?: number;
  /**
   * While a rollout moves on this node the reconciler looks more often than it polls; it reads
   * the index at most this often (default 0: every pass reads it).
   */
  indexIntervalMs?: number;
}

/** The node's coordinator, as rollouts need it (agent-coordinator's SyncRollouts). */
export interface RolloutCoordination {
  sync(state: {
    reports: readonly NodeDeploymentReport[];
    draining: ReadonlyArray<{ namespace: string; revision: string; replacementRevision: string }>;
    indexEtag: string;
  }): Promise<{ admissions: readonly Admission[]; leaderKnown: boolean }>;
}

/**
 * Five poll intervals: a vanished index is far more often an operator's slip or a bucket
 * fault than an intended "delete everything", so the node keeps its Pods that long first.
 */
export const MISSING_INDEX_GRACE_MS = 25_000;

/** One deployment that could not be staged this pass; it keeps its last published Pod. */
export interface DeploymentFault {
  /** Index key `<nodegroup>/<name>`. */
  deployment: string;
  /** Why staging it failed. */
  error: string;
  /** Whether a previously published Pod was kept for it (false: it was never published). */
  kept: boolean;
}

/**
 * A pass that could not reconcile everything but kept the node's state (some deployments
 * faulted, or the index vanished within its grace): reported unhealthy, retried at the poll
 * interval rather than with backoff, since nothing is wrong with reading the bucket itself.
 */
export class DegradedPassError extends PodminError {
  /** What the pass still published for the deployments that staged (when it got that far). */
  readonly result: PassResult | undefined;
  /** The deployments that kept their last published Pod. */
  readonly faults: readonly DeploymentFault[];

  constructor(
    code: PodminError['code'],
    message: string,
    details: { result?: PassResult; faults?: readonly DeploymentFault[]; cause?: unknown } = {},
  ) {
    super(code, message, details.cause === undefined ? {} : { cause: details.cause });
    this.name = 'DegradedPassError';
    this.result = details.result;
    this.faults = details.faults ?? [];
  }
}

/** Health of the reconciler as reported to the supervisor. */
export interface ReconcileHealth {
  healthy: boolean;
  lastError: string | null;
  lastSuccess: Date | null;
  indexEtag: string | null;
  pods: string[];
}

/** What the node applied for one deployment of its NodeGroup, for its receipt. */
export interface AppliedDeployment {
  /** Index key `<nodegroup>/<name>`. */
  deployment: string;
  /** Revision of the published Pod payload ({@link podRevision}); null when none is published. */
  revision: string | null;
  /** The published Pod's namespace and `podmin.dev/revision`, to find it among kubelet's Pods. */
  published: { namespace: string; annotation: string } | null;
  /** Expiry of the published Pod's workload identity. */
  identityExpiry: string | null;
  /** Why the last pass could not stage it (it keeps its last published Pod); null when it could. */
  fault: string | null;
}

/** What the node applied: the index ETag of its last complete pass and each deployment's state. */
export interface AppliedState {
  indexEtag: string | null;
  /** Why the last pass failed as a whole (not one deployment's fault); null when it did not. */
  error: string | null;
  deployments: AppliedDeployment[];
}

/** Outcome of one pass; `warning` is something the operator must hear about even though it worked. */
export type PassResult = (
  { status: 'published'; changedFiles: number; removedFiles: number } | { status: 'unchanged' }
) & { warning?: string };

interface StagedPod {
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
  /** `<pod>/<revision>` whose secrets are on disk (empty after boot: fetch on first load). */
  private readonly secretsOnDisk = new Set<string>();
  private published = new Map<string, string>();
  private health: ReconcileHealth = {
    healthy: false,
    lastError: 'not reconciled yet',
    lastSuccess: null,
    indexEtag: null,
    pods: [],
  };
  private needsPass = true;
  /** What each deployment (index key) last published, kept for it while it cannot be staged. */
  private publishedByKey = new Map<string, StagedPod[]>();
  /** Whether this node has seen a committed index (or holds Pods published from one). */
  private seenIndex: boolean | undefined = undefined;
  /** When the index was first found missing after the node had seen one (for the grace). */
  private missingSince: Date | undefined = undefined;
  /**
   * When the index the node had seen vanished; kept after the grace (when the node has emptied
   * itself) until an index is read again, so the node never looks healthy without desired state.
   */
  private indexGoneSince: Date | undefined = undefined;
  /** Why each deployment could not be staged in the last pass that got that far. */
  private lastFaults = new Map<string, string>();
  /** The last pass's failure when it was not a per-deployment one. */
  private passError: string | null = null;
  /** When the index was last read (ms on `now`). */
  private indexReadMs: number | undefined = undefined;
  /** Rollouts on this node: which static Pods each deployment runs now. */
  private readonly rollouts = new NodeRollouts();
  /** Whether the Pods published before this process started were taken into the rollouts. */
  private adopted = false;
  /** Whether a rollout still moves on this node (look again soon). */
  private active = false;
  private lastSyncFailure: string | undefined;

  constructor(
    private readonly options: ReconcilerOptions,
    private readonly store: DesiredStateReader,
    private readonly secrets: SecretSource,
    private readonly identity: IdentityIssuer,
    private readonly services: ServiceSink,
    private readonly now: () => Date = () => new Date(),
    private readonly gating: {
      kubelet?: KubeletView;
      coordination?: RolloutCoordination;
      log?: (message: string, fields: Record<string, unknown>) => void;
    } = {},
  ) {}

  /** Whether a rollout moves on this node: the loop then looks again within a second. */
  get rolloutActive(): boolean {
    return this.active;
  }

  /**
   * Whether rollouts are gated on this node (kubelet answers and a coordinator is there), with
   * kubelet's Pods and the leader's admissions. Without gating the target replaces at once.
   */
  private async rolloutGate(any: boolean): Promise<{
    gated: boolean;
    kubelet: KubeletReport;
    admissions: readonly Admission[];
  }> {
    const none = { gated: false, kubelet: { state: 'absent' as const, pods: [] }, admissions: [] };
    const { kubelet, coordination } = this.gating;
    if (!any || kubelet === undefined || coordination === undefined) return none;
    const report = await kubelet.report();
    if (report.state === 'absent') return none;
    try {
      const answer = await coordination.sync(this.lastSync);
      this.syncOk();
      return { gated: true, kubelet: report, admissions: answer.admissions };
    } catch (err) {
      this.syncFailed(err);
      return { gated: true, kubelet: report, admissions: [] };
    }
  }

  private lastSync: Parameters<RolloutCoordination['sync']>[0] = {
    reports: [],
    draining: [],
    indexEtag: '',
  };

  /** Tells the coordinator what runs and what drains after a pass. */
  private async syncRollouts(
    looks: ReadonlyMap<string, { health: (revision: string) => SlotHealth }>,
    staged: readonly StagedPod[],
  ): Promise<void> {
    const namespaces = new Map(staged.map((s) => [s.revision, s.namespace]));
    this.lastSync = {
      reports: [...looks].map(([key, look]) => this.rollouts.report(key, true, look.health)),
      draining: [...looks.keys()].flatMap((key) =>
        this.rollouts.drains(key).map((d) => ({
          namespace: namespaces.get(d.revision) ?? '',
          revision: d.revision,
          replacementRevision: d.replacement,
        })),
      ),
      indexEtag: this.indexEtag() ?? '',
    };
    try {
      await this.gating.coordination?.sync(this.lastSync);
      this.syncOk();
    } catch (err) {
      this.syncFailed(err);
    }
  }

  private syncOk(): void {
    if (this.lastSyncFailure !== undefined) this.gating.log?.('reach coordinator again', {});
    this.lastSyncFailure = undefined;
  }

  /** Without the coordinator no node is admitted: what runs keeps running. Logged once per cause. */
  private syncFailed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastSyncFailure)
      this.gating.log?.('sync rollouts failed', { error: message, effect: 'no rollout moves' });
    this.lastSyncFailure = message;
  }

  /** Takes the static Pods found on disk into the rollouts (an agent restart keeps what runs). */
  private async adoptPublished(): Promise<void> {
    const found = await publishedSlots(this.options.paths.manifests, this.now().getTime());
    for (const [key, slots] of found) if (!this.rollouts.has(key)) this.rollouts.adopt(key, slots);
  }

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
      this.passError = null;
      return result;
    } catch (err) {
      this.needsPass = true;
      // Per-deployment faults are reported per deployment; anything else concerns the node.
      this.passError =
        err instanceof DegradedPassError && err.faults.length > 0
          ? null
          : err instanceof Error
            ? err.message
            : String(err);
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

  /**
   * What this process has applied, for the node's receipt: every deployment of its NodeGroup in
   * the index it last read, with the Pod it published (or none yet) and why staging failed.
   */
  applied(): AppliedState {
    const keys = new Set<string>(this.publishedByKey.keys());
    for (const key of Object.keys(this.index)) {
      if (parseDeploymentKey(key).nodegroup === this.options.nodegroup) keys.add(key);
    }
    const deployments = [...keys].sort().map((key): AppliedDeployment => {
      // The newest of its Pods (the surge Pod while both run): what the node moves to.
      const all = this.publishedByKey.get(key) ?? [];
      const staged = all[all.length - 1];
      return {
        deployment: key,
        revision: staged?.payloadRevision ?? null,
        published: staged ? { namespace: staged.namespace, annotation: staged.revision } : null,
        identityExpiry: staged?.identityExpiry ?? null,
        fault: this.lastFaults.get(key) ?? this.rollouts.failure(key),
      };
    });
    const etag = this.health.indexEtag;
    return {
      indexEtag: etag === null || etag === '' ? null : etag,
      error: this.indexMissing() ?? this.passError,
      deployments,
    };
  }

  /**
   * `desired state: index missing since <time>` while the index this node had seen stays
   * missing (within the grace, and after it when the node has removed its Pods); else undefined.
   */
  indexMissing(): string | undefined {
    const since = this.indexGoneSince;
    if (since === undefined) return undefined;
    const graceMs = this.options.missingIndexGraceMs ?? MISSING_INDEX_GRACE_MS;
    const emptied = this.seenIndex === false;
    return (
      `desired state: index missing since ${since.toISOString()} (${INDEX_KEY}); ` +
      (emptied
        ? `counted as empty desired state after ${Math.round(graceMs / 1000)} s, so this node runs no Pods of NodeGroup ${this.options.nodegroup}`
        : `keeping every Pod until it has been missing for ${Math.round(graceMs / 1000)} s`)
    );
  }

  /** The ETag health reports: '' for a missing index, null before the first read. */
  private indexEtag(): string | null {
    return this.indexVersion === undefined ? null : (this.indexVersion ?? '');
  }

  /** Reads the index (conditionally once a version is known); true when desired state changed. */
  private async readIndex(signal: AbortSignal): Promise<{ changed: boolean; warning?: string }> {
    const seen = this.indexVersion;
    const read: IndexChange =
      typeof seen === 'string'
        ? await readIndexIfChanged(this.store, seen, { signal })
        : await readIndex(this.store, { signal });
    if (read.status === 'unchanged') {
      this.missingSince = undefined;
      this.indexGoneSince = undefined;
      return { changed: false };
    }
    let warning: string | undefined;
    if (read.status === 'absent') {
      warning = await this.absentIndex();
    } else {
      this.seenIndex = true;
      this.missingSince = undefined;
      this.indexGoneSince = undefined;
    }
    // A missing index means empty desired state; still missing is no change.
    const version = versionOf(read);
    const changed = !(seen === null && version === null);
    this.index = entriesOf(read);
    this.indexVersion = version;
    return warning === undefined ? { changed } : { changed, warning };
  }

  /**
   * The spec's "missing index means empty desired state" holds for a cluster that never had one.
   * An index that vanishes after the node saw one (in this process, or as Pods it published
   * before a restart) counts as empty only once it has stayed missing for the grace period;
   * until then the pass keeps everything and fails loudly. Returns the warning to log when the
   * grace has run out.
   */
  private async absentIndex(): Promise<string | undefined> {
    this.seenIndex ??= await hasPublishedManifests(this.options.paths.manifests);
    if (!this.seenIndex) return undefined;
    const graceMs = this.options.missingIndexGraceMs ?? MISSING_INDEX_GRACE_MS;
    const now = this.now();
    this.missingSince ??= now;
    this.indexGoneSince ??= now;
    const missingMs = now.getTime() - this.missingSince.getTime();
    if (missingMs < graceMs) {
      throw new DegradedPassError(
        'SERVICE_UNAVAILABLE',
        `reading the desired-state index: ${INDEX_KEY} disappeared ${Math.round(missingMs / 1000)} s ago ` +
          `after this node had seen one; keeping every published Pod, identity and secret until it ` +
          `has been missing for ${Math.round(graceMs / 1000)} s, then it counts as empty desired state`,
      );
    }
    this.seenIndex = false;
    this.missingSince = undefined;
    return `${INDEX_KEY} has been missing for ${Math.round(missingMs / 1000)} s: counting it as empty desired state and removing every static Pod of NodeGroup ${this.options.nodegroup}`;
  }

  private async fetchPayload(key: string, signal: AbortSignal): Promise<Buffer> {
    const cached = this.payloads.get(key);
    if (cached) return cached;
    const body = await readPayload(this.store, key, { signal });
    this.payloads.set(key, body);
    return body;
  }

  private async pass(signal: AbortSignal): Promise<PassResult> {
    // Between polls, a rollout in progress looks again without reading the index.
    const nowMs = this.now().getTime();
    // A rollout tick (a pass the loop ran early because a rollout moves here) works from the
    // index it last read; every other pass reads it, as the poll always did. A tick touches the
    // bucket not at all (no read, no fence): it publishes what the last read index says.
    const tick =
      this.active &&
      !this.needsPass &&
      this.indexReadMs !== undefined &&
      nowMs - this.indexReadMs < (this.options.indexIntervalMs ?? 0) * 0.9;
    const indexDue = !tick;
    const { changed: indexChanged, warning } = indexDue
      ? await this.readIndex(signal)
      : { changed: false, warning: undefined };
    if (indexDue) this.indexReadMs = nowMs;
    const fenceVersion = this.indexVersion ?? null;
    const mine = Object.entries(this.index).filter(
      ([key]) => parseDeploymentKey(key).nodegroup === this.options.nodegroup,
    );
    const gate = await this.rolloutGate(mine.length > 0);
    if (gate.gated && !this.adopted) {
      await this.adoptPublished();
      this.adopted = true;
    }

    const staged: StagedPod[] = [];
    const faults: Array<DeploymentFault & { cause: unknown }> = [];
    const looks = new Map<
      string,
      { target: IndexEntry; health: (revision: string) => SlotHealth }
    >();
    for (const [key, entry] of mine) {
      try {
        // The target's payload names the Pod and carries the strategy.
        const target = parsePodBytes(entry.pod, await this.fetchPayload(entry.pod, signal));
        const pod = target.pod as unknown as PodObject;
        const strategy = strategyOf(pod.metadata.annotations);
        const health = (revision: string): SlotHealth =>
          slotHealth(gate.kubelet, target.namespace, revision, strategy.minReadySeconds, nowMs);
        looks.set(key, { target: entry, health });
        const slots = this.rollouts.decide(key, {
          name: target.name,
          target: entry,
          strategy,
          admission: gate.admissions.find((a) => a.deployment === key),
          gated: gate.gated,
          health,
          nowMs,
        });
        const pods: StagedPod[] = [];
        for (const slot of slots) pods.push(await this.stage(key, slot, slot.staticName, signal));
        staged.push(...pods);
      } catch (err) {
        // A cancelled pass is not one deployment's fault.
        if (signal.aborted) throw err;
        // One broken deployment must not hold up the others: it keeps what it last published.
        const previous = this.publishedByKey.get(key);
        if (previous !== undefined) staged.push(...previous.map((p) => ({ ...p, secrets: [] })));
        faults.push({
          deployment: key,
          error: err instanceof Error ? err.message : String(err),
          kept: previous !== undefined,
          cause: err,
        });
      }
    }
    this.rollouts.retain(new Set(mine.map(([key]) => key)));
    // Drop cached payloads no longer referenced, so memory stays bounded by what runs.
    const referenced = new Set(mine.flatMap(([, e]) => [e.pod, ...(e.service ? [e.service] : [])]));
    for (const s of staged) referenced.add(s.payloadKey);
    for (const s of staged) if (s.servicePayload) referenced.add(s.servicePayload);
    for (const key of this.payloads.keys()) if (!referenced.has(key)) this.payloads.delete(key);
    this.lastFaults = new Map(faults.map((f) => [f.deployment, f.error]));
    const names = staged.map((s) => s.name);
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate)
      throw new PodminError(
        'INVALID_MANIFEST',
        `staging NodeGroup ${this.options.nodegroup}: two deployments publish the Pod name ${duplicate}`,
      );

    // Fence: publish only if the index we staged from is still the committed one.
    if (!tick && !(await isIndexCurrent(this.store, fenceVersion, { signal }))) {
      this.indexVersion = undefined;
      throw new PodminError(
        'PRECONDITION_FAILED',
        fenceVersion === null
          ? 'publishing static Pods: an index appeared while staging; retrying'
          : 'publishing static Pods: the desired-state index changed while staging; retrying',
      );
    }

    // A deployment that never staged in this process has no known Pod name (its payload may be
    // unreadable), so no manifest or workload directory can be proven stale: remove nothing.
    const removeStale = faults.every((f) => f.kept);
    const unchanged =
      !indexChanged &&
      staged.every((s) => this.published.get(s.name) === s.yaml) &&
      this.published.size === staged.length;
    const result: PassResult = unchanged
      ? { status: 'unchanged' }
      : await this.publish(staged, signal, removeStale);
    const byKey = new Map<string, StagedPod[]>();
    for (const s of staged) byKey.set(s.key, [...(byKey.get(s.key) ?? []), { ...s, secrets: [] }]);
    this.publishedByKey = byKey;
    this.active = [...looks].some(([key, look]) =>
      this.rollouts.active(key, { target: look.target, gated: gate.gated, health: look.health }),
    );
    if (gate.gated) await this.syncRollouts(looks, staged);
    if (warning !== undefined) result.warning = warning;
    if (faults.length > 0) throw degraded(this.options.nodegroup, faults, result);
    return result;
  }

  /** Fetches, verifies and transforms one deployment: its Pod, Service, secrets and identity. */
  private async stage(
    key: string,
    entry: { pod: string; service?: string | undefined },
    staticName: string,
    signal: AbortSignal,
  ): Promise<StagedPod> {
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
    if (!this.secretsOnDisk.has(`${name}/${revision}`)) {
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
    const { fingerprint, notAfter } = await this.identity.ensure({
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
      origin: { deployment: key, pod: entry.pod, service: entry.service, staticName },
    });
    return {
      key,
      name: staticName,
      podName: name,
      payloadKey: entry.pod,
      servicePayload: entry.service,
      revision,
      namespace,
      payloadRevision: podRevision(entry.pod),
      identityExpiry: notAfter || undefined,
      yaml: stringifyCanonical(transformed),
      secrets,
      service,
      owner: podOwner(pod),
    };
  }

  private async publish(
    staged: StagedPod[],
    signal: AbortSignal,
    removeStale: boolean,
  ): Promise<PassResult> {
    const { manifests, workloads } = this.options.paths;
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
    const { workloads } = this.options.paths;
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

  /** Whether the next poll must run a full pass even if the index is unchanged. */
  get pending(): boolean {
    return this.needsPass;
  }
}

/** The pass's error when some deployments kept their last published Pod instead of updating. */
function degraded(
  nodegroup: string,
  faults: ReadonlyArray<DeploymentFault & { cause: unknown }>,
  result: PassResult,
): DegradedPassError {
  const codes = new Set(
    faults.map((f) => (f.cause instanceof PodminError ? f.cause.code : 'INTERNAL')),
  );
  const [only] = codes;
  const described = faults
    .map(
      (f) =>
        `deployment ${f.deployment} ${f.kept ? 'keeps its last published Pod' : 'is not published'}: ${f.error}`,
    )
    .join('; ');
  return new DegradedPassError(
    codes.size === 1 && only !== undefined ? only : 'SERVICE_UNAVAILABLE',
    `staging NodeGroup ${nodegroup}: ${described}`,
    {
      result,
      faults: faults.map(({ deployment, error, kept }) => ({ deployment, error, kept })),
      ...(faults.length === 1 ? { cause: faults[0]?.cause } : {}),
    },
  );
}

/** Mode of the workloads root and of each Pod's directory: no other host user lists or enters them. */
export const PRIVATE_DIR_MODE = 0o700;

/** The uid/gid a Pod's securityContext runs it as, if it names either (fsGroup wins for the group). */
function podOwner(pod: PodObject): { uid: number; gid: number } | undefined {
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
async function securePodFiles(
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
async function hasPublishedManifests(manifests: string): Promise<boolean> {
  try {
    return (await fs.readdir(manifests)).some((e) => e.endsWith('.yaml'));
  } catch {
    return false;
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

/** What kubelet says of a revision's Pod: Ready, available (Ready for `minReadySeconds`), its last failure. */
function slotHealth(
  kubelet: KubeletReport,
  namespace: string,
  revision: string,
  minReadySeconds: number,
  nowMs: number,
): SlotHealth {
  const pod = kubelet.pods.find(
    (p) => p.namespace === namespace && p.annotations[REVISION_ANNOTATION] === revision,
  );
  if (pod === undefined) return { ready: false, available: false, reason: null };
  const readySinceMs = pod.readyTransition?.getTime() ?? nowMs;
  return {
    ready: pod.ready,
    available: pod.ready && nowMs - readySinceMs >= minReadySeconds * 1000,
    reason: kubeletReason(pod),
  };
}

/** The static Pods in the manifest directory that name their deployment and payloads, by deployment. */
async function publishedSlots(manifests: string, nowMs: number): Promise<Map<string, Slot[]>> {
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
