import type {
  ConditionalGetResult,
  GetOptions,
  StoredObject,
} from '@podmin/data-access-object-store';
import { parsePodBytes, readPayload } from '@podmin/data-access-desired-state';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { parseDeploymentKey, type DesiredIndex } from '@podmin/util-desired-state';
import { hasCode } from '@podmin/util-errors';
import {
  EMPTY_ROLLOUT_STATE,
  MAX_ROLLOUT_STATE_BYTES,
  ROLLOUT_STATE_KEY,
  parseRolloutState,
  planRollouts,
  serializeRolloutState,
  strategyOf,
  type Admission,
  type LiveNode,
  type NodeDeploymentReport,
  type PlannedDeployment,
  type RolloutState,
  type RolloutStrategy,
} from '@podmin/util-rollout';
import type { LocalReadyPod } from '../coordinator.ports';
import type { MonotonicClock } from '../election/election.ports';
import type { DutyToken } from '../election/duty-gate';
import { errorMessage } from '../error-message';

/** The bucket operations rollouts need (an ObjectStore fits). */
export interface RolloutStore {
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  getIfChanged(key: string, etag: string, options?: GetOptions): Promise<ConditionalGetResult>;
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}

/** One of this node's Pods leaving its Service's backends (agent-staticpod's drain). */
export interface DrainingPod {
  readonly namespace: string;
  /** Its `podmin.dev/revision`. */
  readonly revision: string;
  /** The revision replacing it on this node ('' when it is replaced in place). */
  readonly replacementRevision: string;
}

/** Who this node is and how the rollout duties are timed. */
export interface RolloutCoordinatorOptions {
  readonly nodeId: string;
  readonly nodegroup: string;
  /** A node's report counts this long after it was last heard (the election's lease). */
  readonly leaseMs: number;
  /**
   * A new leader admits nobody until it has had this long to hear every live node (two Hello
   * intervals), so it never counts a node it has not heard yet as gone.
   */
  readonly settleMs: number;
}

interface Heard {
  readonly nodegroup: string;
  readonly reports: readonly NodeDeploymentReport[];
  readonly lastSeenMs: number;
  readonly key: string;
}

/**
 * The coordinator's part in rollouts (DESIGN §6.12). On every node it keeps agent-staticpod's
 * latest report and drain, sends the report to the leader and hands back the leader's
 * admissions. On the leader it keeps every live node's report and, once per pass, plans the
 * waves with {@link planRollouts} and records admissions and halts in `dns/rollouts.json`, each
 * write fenced by the object's ETag and checked against the leadership term, so a successor
 * reads exactly what was admitted and a deposed leader's write fails.
 */
export class RolloutCoordinator {
  private local: readonly NodeDeploymentReport[] = [];
  private localKey = '';
  private draining: readonly DrainingPod[] = [];
  private indexEtag = '';
  /** The leader's last answer to this node (a follower's). */
  private answered: { admissions: readonly Admission[]; atMs: number } | undefined;
  private readonly heard = new Map<string, Heard>();
  /** The state as last read or written in this term; undefined: read it on the next pass. */
  private stored: { state: RolloutState; etag: string | null } | undefined;
  private readonly strategies = new Map<string, RolloutStrategy>();
  private termStartMs: number | undefined;
  private planned = new Map<string, readonly Admission[]>();
  /** Since when (monotonic ms) each `<node>\n<deployment>` has been reported without an available Pod. */
  private readonly downSince = new Map<string, number>();
  private lastFailure: string | undefined;

  constructor(
    private readonly deps: {
      readonly store: RolloutStore;
      readonly monotonic: MonotonicClock;
      readonly wall: () => Date;
      readonly log: StructuredLogger;
    },
    private readonly options: RolloutCoordinatorOptions,
  ) {}

  /**
   * agent-staticpod's report and drain. Returns what changed: the report or drain (tell the
   * leader), the index it reconciled from (the leader plans anew).
   */
  sync(
    reports: readonly NodeDeploymentReport[],
    draining: readonly DrainingPod[],
    indexEtag: string,
  ): { reportChanged: boolean; drainChanged: boolean; indexChanged: boolean } {
    const key = JSON.stringify(reports);
    const drainKey = JSON.stringify(draining);
    const result = {
      reportChanged: key !== this.localKey,
      drainChanged: drainKey !== JSON.stringify(this.draining),
      indexChanged: indexEtag !== this.indexEtag,
    };
    this.local = reports;
    this.localKey = key;
    this.draining = draining;
    this.indexEtag = indexEtag;
    return result;
  }

  /** This node's report, for its Hello. */
  report(): readonly NodeDeploymentReport[] {
    return this.local;
  }

  /** A follower took the leader's answer. */
  takeAnswer(admissions: readonly Admission[]): void {
    this.answered = { admissions, atMs: this.deps.monotonic.nowMs() };
  }

  /**
   * The admissions agent-staticpod acts on: the leader's own plan on the leader, the last
   * answer on a follower while it is within the lease; none (rollouts pause) without a leader.
   */
  admissions(leading: boolean): { admissions: readonly Admission[]; leaderKnown: boolean } {
    if (leading)
      return { admissions: this.planned.get(this.options.nodeId) ?? [], leaderKnown: true };
    const answered = this.answered;
    if (
      answered === undefined ||
      this.deps.monotonic.nowMs() - answered.atMs > this.options.leaseMs
    )
      return { admissions: [], leaderKnown: false };
    return { admissions: answered.admissions, leaderKnown: true };
  }

  /** Ready Pods less those draining (a replaced-in-place one at once, a surged one once its replacement is Ready). */
  withoutDraining(pods: readonly LocalReadyPod[]): readonly LocalReadyPod[] {
    if (this.draining.length === 0) return pods;
    const leaving = (p: LocalReadyPod): boolean =>
      this.draining.some(
        (d) =>
          d.namespace === p.namespace &&
          d.revision === p.revision &&
          (d.replacementRevision === '' ||
            pods.some((q) => q.namespace === d.namespace && q.revision === d.replacementRevision)),
      );
    return pods.filter((p) => !leaving(p));
  }

  /** The leader's side of a Hello: the follower's report; true when it changed. */
  record(nodeId: string, nodegroup: string, reports: readonly NodeDeploymentReport[]): boolean {
    const key = JSON.stringify([nodegroup, reports]);
    const previous = this.heard.get(nodeId);
    this.heard.set(nodeId, { nodegroup, reports, lastSeenMs: this.deps.monotonic.nowMs(), key });
    return previous?.key !== key;
  }

  /** A node that left (its drain at shutdown): it no longer counts. */
  forget(nodeId: string): void {
    this.heard.delete(nodeId);
  }

  /** The leader's admissions for a follower, from its last plan. */
  answerFor(nodeId: string): readonly Admission[] {
    return this.planned.get(nodeId) ?? [];
  }

  /** A new leadership term: the state is read afresh and nobody is admitted until the nodes were heard. */
  startTerm(): void {
    this.stored = undefined;
    this.planned = new Map();
    this.termStartMs = this.deps.monotonic.nowMs();
  }

  /**
   * One planning pass of the leader over the index `entries`: admissions and halts, written to
   * `dns/rollouts.json` when they changed. Bucket requests: one read per term (and while a
   * rollout is paused or halted, one conditional read per pass to notice a resume), one write
   * per change, so O(waves) per rollout.
   */
  async plan(
    token: Pick<DutyToken, 'assertValid'>,
    entries: DesiredIndex,
    signal: AbortSignal,
  ): Promise<void> {
    const nowMs = this.deps.monotonic.nowMs();
    if (this.termStartMs === undefined || nowMs - this.termStartMs < this.options.settleMs) return;
    for (const [id, h] of this.heard)
      if (nowMs - h.lastSeenMs >= this.options.leaseMs) this.heard.delete(id);
    const stored = await this.readState(signal);
    const deployments: PlannedDeployment[] = [];
    const referenced = new Set<string>();
    for (const [key, entry] of Object.entries(entries)) {
      referenced.add(entry.pod);
      deployments.push({
        key,
        nodegroup: parseDeploymentKey(key).nodegroup,
        target: entry.pod,
        strategy: await this.strategyOf(entry.pod, signal),
      });
    }
    for (const key of this.strategies.keys()) if (!referenced.has(key)) this.strategies.delete(key);
    const nodes: LiveNode[] = [
      { id: this.options.nodeId, nodegroup: this.options.nodegroup, reports: this.local },
      ...[...this.heard].map(([id, h]) => ({ id, nodegroup: h.nodegroup, reports: h.reports })),
    ].map((n) => ({ ...n, unsettled: this.unsettled(n.id, n.reports, nowMs) }));
    const live = new Set(nodes.map((n) => n.id));
    for (const key of this.downSince.keys())
      if (!live.has(key.slice(0, key.indexOf('\n')))) this.downSince.delete(key);
    const result = planRollouts({ deployments, state: stored.state, nodes, now: this.deps.wall() });
    if (result.changed) {
      const body = serializeRolloutState(result.state);
      token.assertValid(`writing ${ROLLOUT_STATE_KEY}`);
      try {
        const etag =
          stored.etag === null
            ? await this.deps.store.putIfAbsent(ROLLOUT_STATE_KEY, body)
            : await this.deps.store.putIfMatch(ROLLOUT_STATE_KEY, body, stored.etag);
        this.stored = { state: result.state, etag };
      } catch (err) {
        if (hasCode(err, 'PRECONDITION_FAILED')) {
          // Someone else wrote it (an operator's pause or resume, or a newer leader): read it
          // again next pass; nothing of this plan was admitted.
          this.stored = undefined;
          this.deps.log.event('info', 'reread rollout state', {
            reason: 'it changed since it was read',
          });
          return;
        }
        throw err;
      }
      for (const a of result.admittedNow)
        this.deps.log.event('info', 'admit node', { deployment: a.deployment, node: a.node });
      for (const h of result.halted)
        this.deps.log.event('warn', 'halt rollout', { deployment: h.deployment, ...h.halt });
    }
    this.planned = new Map(result.admissions);
    if (this.lastFailure !== undefined) this.deps.log.event('info', 'plan rollouts again', {});
    this.lastFailure = undefined;
  }

  /**
   * The deployments a node has reported without an available Pod for less than the settle time
   * (its report may lag its readiness); remembers since when each has been so.
   */
  private unsettled(
    nodeId: string,
    reports: readonly NodeDeploymentReport[],
    nowMs: number,
  ): ReadonlySet<string> {
    const out = new Set<string>();
    for (const r of reports) {
      const key = `${nodeId}\n${r.deployment}`;
      if (r.pods.length === 0 || r.pods.some((p) => p.available)) {
        this.downSince.delete(key);
        continue;
      }
      const since = this.downSince.get(key) ?? nowMs;
      this.downSince.set(key, since);
      if (nowMs - since < this.options.settleMs) out.add(r.deployment);
    }
    return out;
  }

  /** Logs a failed pass once per cause (it is retried every pass). */
  failed(err: unknown): void {
    const message = errorMessage(err);
    if (message !== this.lastFailure)
      this.deps.log.event('warn', 'plan rollouts failed', { error: message });
    this.lastFailure = message;
  }

  private async readState(
    signal: AbortSignal,
  ): Promise<{ state: RolloutState; etag: string | null }> {
    const known = this.stored;
    if (known !== undefined) {
      const waiting = Object.values(known.state.deployments).some(
        (d) => d.paused || d.halted !== null,
      );
      if (!waiting || known.etag === null) return known;
      const change = await this.deps.store.getIfChanged(ROLLOUT_STATE_KEY, known.etag, {
        maxBytes: MAX_ROLLOUT_STATE_BYTES,
        signal,
      });
      if (change.status === 'unchanged') return known;
      this.stored = this.parse(change.body, change.etag);
      return this.stored;
    }
    try {
      const read = await this.deps.store.get(ROLLOUT_STATE_KEY, {
        maxBytes: MAX_ROLLOUT_STATE_BYTES,
        signal,
      });
      this.stored = this.parse(read.body, read.etag);
    } catch (err) {
      if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
      this.stored = { state: EMPTY_ROLLOUT_STATE, etag: null };
    }
    return this.stored;
  }

  /** A malformed state is replaced (fenced by its ETag): its admissions are lost, not its Pods. */
  private parse(body: Buffer, etag: string): { state: RolloutState; etag: string } {
    try {
      return { state: parseRolloutState(body), etag };
    } catch (err) {
      this.deps.log.event('warn', 'replace malformed rollout state', {
        error: errorMessage(err),
      });
      return { state: EMPTY_ROLLOUT_STATE, etag };
    }
  }

  private async strategyOf(podKey: string, signal: AbortSignal): Promise<RolloutStrategy> {
    const known = this.strategies.get(podKey);
    if (known !== undefined) return known;
    const payload = parsePodBytes(podKey, await readPayload(this.deps.store, podKey, { signal }));
    const annotations = (payload.pod as { metadata?: { annotations?: Record<string, string> } })
      .metadata?.annotations;
    const strategy = strategyOf(annotations);
    this.strategies.set(podKey, strategy);
    return strategy;
  }
}
