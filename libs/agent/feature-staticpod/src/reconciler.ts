import { PodminError } from '@podmin/util-errors';
import { parseDeploymentKey, type IndexEntry } from '@podmin/util-desired-state';
import { isIndexCurrent, parsePodBytes } from '@podmin/data-access-desired-state';
import type { NodePaths } from './node-paths';
import { strategyOf } from '@podmin/util-rollout';
import type { KubeletView } from './receipts/receipt-writer';
import { NodeRollouts, type SlotHealth } from './rollout/node-rollout';
import type { PodObject } from './pod-transform';
import {
  DegradedPassError,
  type AppliedDeployment,
  type AppliedState,
  type PassResult,
  type ReconcileHealth,
} from './reconcile-outcome';
import { DesiredIndexFollower } from './desired-index-follower';
import { IndexTrust } from './index-trust';
import { RolloutGate, slotHealth, type RolloutCoordination } from './rollout-gate';
import { publishedSlots } from './static-pod-files';
import { PodStager } from './pod-stager';
import { degradedPassError, stagingFault, type StagingFault } from './staging-faults';
import { StaticPodPublisher, type StagedPod } from './static-pod-publisher';
import type {
  DesiredStateReader,
  IdentityIssuer,
  SecretSource,
  ServiceSink,
  TrustListReader,
} from './staticpod.ports';

// Moved to their own modules; exported here too, as before (the outcome types: index.ts).
export { PRIVATE_DIR_MODE } from './static-pod-files';
export type { RolloutCoordination } from './rollout-gate';
export { MISSING_INDEX_GRACE_MS } from './desired-index-follower';

/** Static configuration of the reconciler. */
export interface ReconcilerOptions {
  cluster: string;
  nodegroup: string;
  nodeAddress: string;
  paths: NodePaths;
  /**
   * How long an index that disappeared after the node saw one must stay missing before it counts
   * as empty desired state (default `MISSING_INDEX_GRACE_MS`, 25 s).
   */
  missingIndexGraceMs?: number;
  /**
   * While a rollout moves on this node the reconciler looks more often than it polls; it reads
   * the index at most this often (default 0: every pass reads it).
   */
  indexIntervalMs?: number;
}

/**
 * One NodeGroup's static-Pod reconciler: reads the index (conditional GET), fetches and
 * verifies only referenced payloads, stages the complete candidate set (secrets, identity),
 * confirms the index ETag is unchanged, then publishes files by same-directory atomic
 * rename, removes stale manifests and hands Services on. Any failure leaves the previously
 * published state in place and marks the reconciler unhealthy.
 */
export class StaticPodReconciler {
  /** The desired-state index as last read, and the missing-index grace. */
  private readonly desired: DesiredIndexFollower;
  private running = false;
  /** Fetches, verifies and renders what a pass publishes. */
  private readonly stager: PodStager;
  /** Writes what a pass staged and remembers what it published. */
  private readonly publisher: StaticPodPublisher;
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
  /** Kubelet's Pods and the leader's admissions before a pass, the node's rollouts after it. */
  private readonly gate: RolloutGate;

  constructor(
    private readonly options: ReconcilerOptions,
    private readonly store: DesiredStateReader,
    secrets: SecretSource,
    identity: IdentityIssuer,
    services: ServiceSink,
    private readonly now: () => Date = () => new Date(),
    gating: {
      kubelet?: KubeletView;
      coordination?: RolloutCoordination;
      log?: (message: string, fields: Record<string, unknown>) => void;
      /**
       * The cluster's trust list: each newly read index is verified against it before anything
       * is staged. Without it (or while the cluster has none) nothing is verified.
       */
      trustList?: TrustListReader;
    } = {},
  ) {
    this.publisher = new StaticPodPublisher(options.paths, identity, services);
    this.gate = new RolloutGate(gating);
    this.stager = new PodStager(options, store, secrets, identity, this.publisher.secretsOnDisk);
    this.desired = new DesiredIndexFollower(
      store,
      {
        nodegroup: options.nodegroup,
        manifests: options.paths.manifests,
        ...(options.missingIndexGraceMs === undefined
          ? {}
          : { missingIndexGraceMs: options.missingIndexGraceMs }),
        ...(gating.trustList === undefined
          ? {}
          : {
              trust: new IndexTrust(gating.trustList, {
                cluster: options.cluster,
                stateDir: options.paths.state,
                nowMs: () => now().getTime(),
              }),
            }),
        ...(gating.log === undefined ? {} : { log: gating.log }),
      },
      now,
    );
  }

  /** Whether a rollout moves on this node: the loop then looks again within a second. */
  get rolloutActive(): boolean {
    return this.active;
  }

  /** Tells the coordinator what runs and what drains after a pass. */
  private async syncRollouts(
    looks: ReadonlyMap<string, { health: (revision: string) => SlotHealth }>,
    staged: readonly StagedPod[],
  ): Promise<void> {
    const namespaces = new Map(staged.map((s) => [s.revision, s.namespace]));
    await this.gate.tell({
      reports: [...looks].map(([key, look]) => this.rollouts.report(key, true, look.health)),
      draining: [...looks.keys()].flatMap((key) =>
        this.rollouts.drains(key).map((d) => ({
          namespace: namespaces.get(d.revision) ?? '',
          revision: d.revision,
          replacementRevision: d.replacement,
        })),
      ),
      indexEtag: this.indexEtag() ?? '',
    });
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
        pods: [...this.publisher.published.keys()].sort(),
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
    for (const key of Object.keys(this.desired.entries)) {
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
    return this.desired.missing();
  }

  /** The ETag health reports: '' for a missing index, null before the first read. */
  private indexEtag(): string | null {
    return this.desired.etag();
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
      ? await this.desired.read(signal)
      : { changed: false, warning: undefined };
    if (indexDue) this.indexReadMs = nowMs;
    const fenceVersion = this.desired.version ?? null;
    const mine = Object.entries(this.desired.entries).filter(
      ([key]) => parseDeploymentKey(key).nodegroup === this.options.nodegroup,
    );
    const gate = await this.gate.ask(mine.length > 0);
    if (gate.gated && !this.adopted) {
      await this.adoptPublished();
      this.adopted = true;
    }

    const staged: StagedPod[] = [];
    const faults: StagingFault[] = [];
    const looks = new Map<
      string,
      { target: IndexEntry; health: (revision: string) => SlotHealth }
    >();
    for (const [key, entry] of mine) {
      try {
        // The target's payload names the Pod and carries the strategy.
        const target = parsePodBytes(entry.pod, await this.stager.fetchPayload(entry.pod, signal));
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
        for (const slot of slots)
          pods.push(await this.stager.stage(key, slot, slot.staticName, signal));
        staged.push(...pods);
      } catch (err) {
        // A cancelled pass is not one deployment's fault.
        if (signal.aborted) throw err;
        // One broken deployment must not hold up the others: it keeps what it last published.
        const previous = this.publishedByKey.get(key);
        if (previous !== undefined) staged.push(...previous.map((p) => ({ ...p, secrets: [] })));
        faults.push(stagingFault(key, err, previous !== undefined));
      }
    }
    this.rollouts.retain(new Set(mine.map(([key]) => key)));
    // Drop cached payloads no longer referenced, so memory stays bounded by what runs.
    const referenced = new Set(mine.flatMap(([, e]) => [e.pod, ...(e.service ? [e.service] : [])]));
    for (const s of staged) referenced.add(s.payloadKey);
    for (const s of staged) if (s.servicePayload) referenced.add(s.servicePayload);
    this.stager.retain(referenced);
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
      this.desired.forget();
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
      staged.every((s) => this.publisher.published.get(s.name) === s.yaml) &&
      this.publisher.published.size === staged.length;
    const result: PassResult = unchanged
      ? { status: 'unchanged' }
      : await this.publisher.publish(staged, signal, removeStale);
    const byKey = new Map<string, StagedPod[]>();
    for (const s of staged) byKey.set(s.key, [...(byKey.get(s.key) ?? []), { ...s, secrets: [] }]);
    this.publishedByKey = byKey;
    this.active = [...looks].some(([key, look]) =>
      this.rollouts.active(key, { target: look.target, gated: gate.gated, health: look.health }),
    );
    if (gate.gated) await this.syncRollouts(looks, staged);
    if (warning !== undefined) result.warning = warning;
    if (faults.length > 0) throw degradedPassError(this.options.nodegroup, faults, result);
    return result;
  }

  /** Whether the next poll must run a full pass even if the index is unchanged. */
  get pending(): boolean {
    return this.needsPass;
  }
}
