import type { DesiredStateReader } from '@podmin/data-access-desired-state';
import { readIndexIfChanged } from '@podmin/data-access-desired-state';
import { COORDINATOR_DRAIN_TIMEOUT_MS, HELLO_INTERVAL_MS } from '@podmin/agent-util-config';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import type {
  CoordinationPeer,
  CoordinationServing,
  CoordinationTransport,
  HelloAnswer,
  HelloHandler,
  HelloReport,
  ReadinessSource,
  ServerTimeSource,
} from '../coordinator.ports';
import type { EndpointTable } from '../coordination/endpoint-table';
import { LeaderHelloHandler } from '../coordination/leader-hello-handler';
import { DutyGate } from '../election/duty-gate';
import type { LeaseStore, LeadershipTerm, MonotonicClock } from '../election/election.ports';
import type { Elector } from '../election/elector';
import { computeSnapshot, type NodeEndpoints } from '../snapshot/compute-snapshot';
import { encodeServices, type ServiceSnapshot } from '../snapshot/snapshot-codec';
import { SnapshotCorruptError } from '../snapshot/snapshot-error';
import {
  readSnapshot,
  restoreIdentities,
  snapshotVersionOf,
  writeSnapshot,
  type SnapshotVersion,
} from '../snapshot/snapshot-store';
import type { SnapshotStore } from '../snapshot/snapshot.ports';
import { readDesiredServices, type DesiredServices } from '../snapshot/read-desired-services';
import { ServicesViewHub, ViewSource, snapshotOf, withoutBackends } from './services-view';
import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import { RolloutCoordinator, type DrainingPod } from '../rollout/rollout-coordinator';
import { ClockSkewMonitor } from './clock-skew';

/** The bucket operations the coordinator needs (an ObjectStore fits). */
export type CoordinatorStore = LeaseStore & SnapshotStore & DesiredStateReader;

/** Who this node is and how often the coordinator acts. */
export interface CoordinatorOptions {
  readonly cluster: string;
  readonly nodeId: string;
  readonly nodegroup: string;
  /** The node's canonical Pod /80. */
  readonly prefix: string;
  /** Followers call the leader this often (and sooner when local readiness changes). */
  readonly helloIntervalMs?: number;
  /** The leader re-checks the index and recomputes at least this often. */
  readonly snapshotIntervalMs?: number;
  /** Changes arriving within this window are computed and written once. */
  readonly coalesceMs?: number;
  /** Deadline of one Hello. */
  readonly helloTimeoutMs?: number;
  /** Longest the drain at shutdown waits for the leader's acknowledgement. */
  readonly drainTimeoutMs?: number;
}

/** The coordinator's collaborators. */
export interface CoordinatorDeps {
  readonly store: CoordinatorStore;
  readonly elector: Elector;
  readonly readiness: ReadinessSource;
  /** The followers' reports (the leader's side of Hello). */
  readonly endpoints: EndpointTable;
  readonly transport: CoordinationTransport;
  readonly monotonic: MonotonicClock;
  readonly log: StructuredLogger;
  /** Reports the coordinator's health (the process lifecycle's reportHealth). */
  readonly health: (healthy: boolean, detail?: string) => void;
  /** Wall-clock time, for admission and halt times in `dns/rollouts.json` (default: Date). */
  readonly wall?: () => Date;
  /** The bucket's clock, compared with ours on every health report (absent: not checked). */
  readonly serverTime?: ServerTimeSource;
}

/** This node's part in the election, for GetLeadership. */
export interface LeadershipView {
  readonly leader: boolean;
  readonly leaderId: string;
  readonly leaderAddr: string;
  readonly validForMs: number;
}

/**
 * The drain's bound at shutdown: a follower's leaving Hello, or a leader's last snapshot pass
 * without its own endpoints. Part of podmin-agent's stop bound (the supervisor's).
 */
export const DRAIN_TIMEOUT_MS = COORDINATOR_DRAIN_TIMEOUT_MS;

const DEFAULTS = {
  helloIntervalMs: HELLO_INTERVAL_MS,
  snapshotIntervalMs: 5_000,
  coalesceMs: 200,
  helloTimeoutMs: 3_000,
  drainTimeoutMs: DRAIN_TIMEOUT_MS,
};

/**
 * The agent-coordinator's core: restores Service identities from `dns/services.pb`, runs the
 * election, and then either leads (computes and writes fenced snapshots from the complete index
 * and every node's ready endpoints) or follows (reports this node's ready Pods to the leader
 * and takes its snapshots, clearing backends when no leader has answered within the lease).
 * The node's view is published to agent-dns and agent-dataplane through {@link view}.
 */
export class Coordinator implements HelloHandler {
  /** The node's current Services view (long-polled over the Coordinator contract). */
  readonly view = new ServicesViewHub();
  /** Rollouts: this node's report and admissions; on the leader, the waves (DESIGN §6.12). */
  readonly rollouts: RolloutCoordinator;
  private readonly options: Required<CoordinatorOptions>;
  private readonly gate: DutyGate;
  private readonly helloHandler: LeaderHelloHandler;
  private readonly stopping = new AbortController();
  /** Ends the follower rounds first at shutdown, so no report follows the leaving one. */
  private readonly followStop = new AbortController();
  /** Set at shutdown: this node's own endpoints are left out of every later snapshot pass. */
  private draining = false;
  /** Snapshot passes started so far, and who waits for one that starts after a given pass. */
  private passes = 0;
  private passWaiters: Array<{ after: number; resolve: (failure: string | undefined) => void }> =
    [];
  private serving: CoordinationServing | undefined;
  private electing: Promise<void> | undefined;
  private following: Promise<void> | undefined;
  private readonly leaderWakeup: Wakeup;
  private readonly followerWakeup: Wakeup;
  private desired: DesiredServices | undefined;
  private lastHeardMs: number;
  private leaderUnreachable: string | undefined;
  private lastPassError: string | undefined;
  private healthNote = '';
  private readonly clockSkew: ClockSkewMonitor | undefined;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly deps: CoordinatorDeps,
    options: CoordinatorOptions,
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.gate = new DutyGate(deps.elector);
    this.leaderWakeup = new Wakeup(this.options.coalesceMs);
    this.followerWakeup = new Wakeup(this.options.coalesceMs);
    this.helloHandler = new LeaderHelloHandler({
      table: deps.endpoints,
      nodeId: options.nodeId,
      isLeader: () => deps.elector.isLeader(),
      knownLeader: () => deps.elector.leader(),
      // Only what this node wrote as leader: a restored or expired view is not the leader's.
      snapshot: () => {
        const view = this.view.current();
        return view.source === ViewSource.LEADER ? view.snapshot : undefined;
      },
      rollouts: {
        record: (nodeId, report) => {
          if (report.leaving) this.rollouts.forget(nodeId);
          else if (this.rollouts.record(nodeId, report.nodegroup, report.rollouts))
            this.leaderWakeup.kick();
        },
        answer: (nodeId) => this.rollouts.answerFor(nodeId),
      },
    });
    this.rollouts = new RolloutCoordinator(
      {
        store: deps.store,
        monotonic: deps.monotonic,
        wall: deps.wall ?? (() => new Date()),
        log: deps.log,
      },
      {
        nodeId: options.nodeId,
        nodegroup: options.nodegroup,
        leaseMs: deps.elector.settings.leaseMs,
        settleMs: 2 * this.options.helloIntervalMs + 500,
      },
    );
    this.lastHeardMs = deps.monotonic.nowMs();
    this.clockSkew =
      deps.serverTime === undefined ? undefined : new ClockSkewMonitor(deps.serverTime, deps.log);
  }

  /** Startup in the spec's order: restore identities, serve coordination, elect, then reconcile. */
  async start(): Promise<void> {
    await this.restore();
    this.serving = await this.deps.transport.serve(this);
    this.deps.log.event('info', 'serve coordination', { address: this.serving.address });
    this.unsubscribe.push(
      this.deps.elector.onElected((term) => void this.lead(term)),
      this.deps.endpoints.onChange(() => this.leaderWakeup.kick()),
      this.deps.readiness.onChange(() => {
        this.leaderWakeup.kick();
        this.followerWakeup.kick();
      }),
    );
    void this.deps.readiness
      .run(this.stopping.signal)
      .catch((err: unknown) =>
        this.deps.log.event('error', 'readiness watch ended', { error: messageOf(err) }),
      );
    this.electing = this.deps.elector.run(this.stopping.signal);
    this.following = this.follow();
  }

  /**
   * Shutdown, the spec's drain: stop reporting, then tell the leader this node's endpoints are
   * leaving and wait for its acknowledgement (a follower's leaving Hello answered; the leader's
   * own snapshot pass without them written), bounded by `drainTimeoutMs`; then resign (the
   * elector does on abort) and close the server.
   */
  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.draining = true;
    this.followStop.abort();
    await this.following;
    if (this.deps.elector.isLeader()) await this.drainAsLeader();
    else await this.drainToLeader();
    this.stopping.abort();
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all([this.electing, this.following]);
    await this.serving?.close();
    this.deps.transport.close();
  }

  /** A follower's drain: one Hello with `leaving` and no endpoints, answered by the leader. */
  private async drainToLeader(): Promise<void> {
    const leader = this.deps.elector.leader();
    if (!leader || leader.id === this.options.nodeId) return;
    const started = this.deps.monotonic.nowMs();
    await this.deps.transport
      .hello(
        leader.addr,
        { ...this.report(), endpoints: [], leaving: true },
        this.options.drainTimeoutMs,
      )
      .then(() =>
        this.deps.log.event('info', 'drain endpoints', {
          leader: leader.id,
          acknowledged: true,
          ms: Math.round(this.deps.monotonic.nowMs() - started),
        }),
      )
      .catch((err: unknown) =>
        this.deps.log.event('warn', 'drain endpoints failed', {
          leader: leader.id,
          error: messageOf(err),
        }),
      );
  }

  /** The leader's drain: one more snapshot pass, without this node's endpoints, written. */
  private async drainAsLeader(): Promise<void> {
    const started = this.deps.monotonic.nowMs();
    const after = this.passes;
    let timer: NodeJS.Timeout | undefined;
    const pass = new Promise<string | undefined>((resolve) =>
      this.passWaiters.push({ after, resolve }),
    );
    this.leaderWakeup.kick();
    const failure = await Promise.race([
      pass,
      new Promise<string>((resolve) => {
        timer = setTimeout(
          () => resolve(`no snapshot pass within ${this.options.drainTimeoutMs} ms`),
          this.options.drainTimeoutMs,
        );
      }),
    ]);
    clearTimeout(timer);
    if (failure === undefined)
      this.deps.log.event('info', 'drain endpoints', {
        leader: this.options.nodeId,
        acknowledged: true,
        ms: Math.round(this.deps.monotonic.nowMs() - started),
      });
    else
      this.deps.log.event('warn', 'drain endpoints failed', {
        leader: this.options.nodeId,
        error: failure,
      });
  }

  /**
   * SyncRollouts: agent-staticpod's report and drain go to the leader at once when they changed
   * (a drained Pod leaves every node's backends within a Hello); answers this node's admissions.
   */
  syncRollouts(
    reports: readonly NodeDeploymentReport[],
    draining: readonly DrainingPod[],
    indexEtag: string,
  ): { admissions: readonly Admission[]; leaderKnown: boolean } {
    const changed = this.rollouts.sync(reports, draining, indexEtag);
    if (changed.reportChanged || changed.drainChanged || changed.indexChanged) {
      this.leaderWakeup.kick();
      this.followerWakeup.kick();
    }
    return this.rollouts.admissions(this.deps.elector.isLeader());
  }

  /** GetLeadership's answer. */
  leadership(): LeadershipView {
    const leader = this.deps.elector.leader();
    const leading = this.deps.elector.isLeader();
    return {
      leader: leading,
      leaderId: leader?.id ?? '',
      leaderAddr: leader?.addr ?? '',
      validForMs: leading ? Math.floor(this.deps.elector.validForMs()) : 0,
    };
  }

  /** The leader's side of Hello: record the follower's endpoints, answer the latest snapshot. */
  hello(peer: CoordinationPeer, report: HelloReport): Promise<HelloAnswer> {
    return this.helloHandler.hello(peer, report);
  }

  /** Serves DNS identities from the last snapshot, without backends, before anyone is heard. */
  private async restore(): Promise<void> {
    try {
      const read = await readSnapshot(this.deps.store, { cluster: this.options.cluster });
      if (read === undefined) {
        this.deps.log.event('info', 'no snapshot to restore', {});
        return;
      }
      const restored = snapshotOf(restoreIdentities(read.snapshot), read.snapshot.generation);
      this.view.publish(restored, ViewSource.RESTORED);
      this.deps.log.event('info', 'restore Service identities', {
        generation: read.snapshot.generation,
        services: restored.services.length,
      });
    } catch (err) {
      // Startup must not wait on a bucket outage or a corrupt object: the leader rewrites it.
      this.deps.log.event('warn', 'restore Service identities failed', { error: messageOf(err) });
    }
  }

  /** Every node's endpoints: the followers' reports plus this node's own Ready Pods. */
  private nodes(): NodeEndpoints[] {
    return this.deps.endpoints.nodes({
      nodeId: this.options.nodeId,
      prefix: this.options.prefix,
      endpoints: this.draining ? [] : this.rollouts.withoutDraining(this.deps.readiness.current()),
    });
  }

  /** One term of leadership: snapshot passes until the term ends. */
  private async lead(term: LeadershipTerm): Promise<void> {
    let previous: SnapshotVersion | undefined;
    let fresh = false;
    this.lastPassError = undefined;
    this.rollouts.startTerm();
    while (!term.signal.aborted && !this.stopping.signal.aborted) {
      const pass = ++this.passes;
      let failure: string | undefined = 'the pass wrote nothing';
      try {
        if (!fresh) {
          previous = await this.readVersion();
          fresh = true;
        }
        const desired = await this.readDesired(term.signal);
        const computed = computeSnapshot({
          cluster: this.options.cluster,
          services: desired.services,
          nodes: this.nodes(),
        });
        for (const r of computed.refused) this.deps.log.event('warn', 'refuse endpoint', { ...r });
        const token = this.gate.current();
        if (token === undefined || token.term !== term.term) {
          this.deps.log.event('warn', 'refuse snapshot write', {
            reason: 'this node no longer leads',
            term: term.term,
          });
          break;
        }
        const result = await writeSnapshot(this.deps.store, computed.snapshot, previous, token);
        this.lastHeardMs = this.deps.monotonic.nowMs();
        if (result.status === 'written') {
          previous = {
            etag: result.etag,
            generation: result.snapshot.generation,
            revision: result.snapshot.revision,
          };
          this.deps.log.event('info', 'write snapshot', {
            generation: result.snapshot.generation,
            revision: result.snapshot.revision.slice(0, 12),
            services: result.snapshot.services.length,
            backends: result.snapshot.services.reduce((n, s) => n + s.backends.length, 0),
          });
          this.view.publish(result.snapshot, ViewSource.LEADER);
        } else {
          this.view.publish(
            { ...computed.snapshot, generation: previous?.generation ?? 0 },
            ViewSource.LEADER,
          );
        }
        this.passResult(undefined);
        failure = undefined;
        await this.rollouts
          .plan(token, desired.entries, term.signal)
          .catch((err: unknown) => this.rollouts.failed(err));
      } catch (err) {
        failure = messageOf(err);
        if (err instanceof SnapshotCorruptError) {
          // Replace it: an unconditional-looking write still fenced by the corrupt object's ETag.
          previous = { etag: err.etag, generation: 0 };
          fresh = true;
          this.deps.log.event('warn', 'replace corrupt snapshot', { etag: err.etag });
          continue;
        }
        if (hasCode(err, 'PRECONDITION_FAILED')) {
          this.deps.log.event('warn', 'refuse snapshot write', { error: messageOf(err) });
          fresh = false;
        } else if (hasCode(err, 'CONFLICT')) {
          fresh = false;
        } else if (term.signal.aborted) {
          // The term ended mid-pass (a frozen leader resuming past its deadline): the duty gate
          // refuses what this pass would have written.
          this.deps.log.event('warn', 'refuse snapshot write', {
            reason: 'this node stopped leading during the pass',
            term: term.term,
          });
        } else {
          this.deps.log.event('warn', 'snapshot pass failed', { error: messageOf(err) });
          this.passResult(messageOf(err));
        }
      }
      this.passEnded(pass, failure);
      await this.leaderWakeup.wait(this.options.snapshotIntervalMs, term.signal);
    }
  }

  /** Tells whoever waits for a pass that started after they began waiting how it ended. */
  private passEnded(pass: number, failure: string | undefined): void {
    const ready = this.passWaiters.filter((w) => pass > w.after);
    this.passWaiters = this.passWaiters.filter((w) => pass <= w.after);
    for (const w of ready) w.resolve(failure);
  }

  /** The stored snapshot's version, the fence of this term's first write. */
  private async readVersion(): Promise<SnapshotVersion | undefined> {
    try {
      return snapshotVersionOf(
        await readSnapshot(this.deps.store, { cluster: this.options.cluster }),
      );
    } catch (err) {
      if (err instanceof SnapshotCorruptError) {
        this.deps.log.event('warn', 'replace corrupt snapshot', { etag: err.etag });
        return { etag: err.etag, generation: 0 };
      }
      throw err;
    }
  }

  /** The complete desired Services, re-read only when the index changed (one conditional GET). */
  private async readDesired(signal: AbortSignal): Promise<DesiredServices> {
    const known = this.desired;
    if (known !== undefined && known.version !== null) {
      const change = await readIndexIfChanged(this.deps.store, known.version, { signal });
      if (change.status === 'unchanged') return known;
    }
    const desired = await readDesiredServices(this.deps.store, { signal, log: this.deps.log });
    this.desired = desired;
    return desired;
  }

  /** Follower rounds: Hello to the leader, take its snapshot, clear backends after the lease. */
  private async follow(): Promise<void> {
    const signal = this.followStop.signal;
    const leaseMs = this.deps.elector.settings.leaseMs;
    while (!signal.aborted) {
      const leader = this.deps.elector.leader();
      if (!this.deps.elector.isLeader() && leader && leader.id !== this.options.nodeId) {
        await this.helloLeader(leader.id, leader.addr);
      }
      const silentMs = this.deps.monotonic.nowMs() - this.lastHeardMs;
      const view = this.view.current();
      if (
        !this.deps.elector.isLeader() &&
        silentMs > leaseMs &&
        view.source === ViewSource.LEADER
      ) {
        this.view.publish(withoutBackends(view.snapshot), ViewSource.EXPIRED);
        this.deps.log.event('warn', 'clear backends', {
          reason: 'no leader heard from within the lease',
          silentMs: Math.round(silentMs),
          services: view.snapshot.services.length,
        });
      }
      this.reportHealth();
      await this.followerWakeup.wait(this.options.helloIntervalMs, signal);
    }
  }

  private async helloLeader(id: string, addr: string): Promise<void> {
    try {
      const answer = await this.deps.transport.hello(
        addr,
        this.report(),
        this.options.helloTimeoutMs,
      );
      this.lastHeardMs = this.deps.monotonic.nowMs();
      if (this.leaderUnreachable !== undefined)
        this.deps.log.event('info', 'leader reachable again', { leader: id });
      this.leaderUnreachable = undefined;
      this.rollouts.takeAnswer(answer.admissions);
      for (const r of answer.refused)
        this.deps.log.event('warn', 'leader refused endpoint', { leader: id, ...r });
      if (answer.snapshot !== undefined) this.takeSnapshot(id, answer.snapshot);
    } catch (err) {
      const message = messageOf(err);
      if (this.leaderUnreachable === undefined)
        this.deps.log.event('warn', 'hello leader failed', { leader: id, addr, error: message });
      this.leaderUnreachable = message;
    }
  }

  /** Takes the leader's snapshot when it is consistent (its revision is its Services' digest). */
  private takeSnapshot(leader: string, snapshot: ServiceSnapshot): void {
    let revision: string;
    try {
      revision = encodeServices(snapshot.services).revision;
    } catch (err) {
      this.deps.log.event('warn', 'refuse leader snapshot', { leader, error: messageOf(err) });
      return;
    }
    if (revision !== snapshot.revision) {
      this.deps.log.event('warn', 'refuse leader snapshot', {
        leader,
        error: `revision ${snapshot.revision} does not match its Services (${revision})`,
      });
      return;
    }
    if (this.view.publish(snapshot, ViewSource.LEADER))
      this.deps.log.event('info', 'take snapshot', {
        leader,
        generation: snapshot.generation,
        revision: snapshot.revision.slice(0, 12),
        services: snapshot.services.length,
      });
  }

  private report(): HelloReport {
    return {
      nodeId: this.options.nodeId,
      nodegroup: this.options.nodegroup,
      prefix: this.options.prefix,
      endpoints: this.rollouts.withoutDraining(this.deps.readiness.current()),
      knownRevision:
        this.view.current().source === ViewSource.LEADER
          ? this.view.current().snapshot.revision
          : '',
      leaving: false,
      rollouts: this.rollouts.report(),
    };
  }

  private passResult(error: string | undefined): void {
    this.lastPassError = error;
    this.reportHealth();
  }

  /**
   * Health: the leader's last pass, the follower's contact with the leader, and readiness. Notes
   * (no kubelet, a skewed clock) show in the detail without making the process unhealthy.
   */
  private reportHealth(): void {
    const readiness = this.deps.readiness.health();
    const problems: string[] = [];
    const electionFault = this.deps.elector.fault();
    if (electionFault !== undefined) problems.push(electionFault);
    if (this.deps.elector.isLeader() && this.lastPassError)
      problems.push(`snapshot pass failed: ${this.lastPassError}`);
    if (!this.deps.elector.isLeader() && this.leaderUnreachable)
      problems.push(`leader unreachable: ${this.leaderUnreachable}`);
    if (!readiness.ok) problems.push(`readiness: ${readiness.detail}`);
    const notes = readiness.state === 'no-kubelet' ? [readiness.detail] : [];
    // Checked on every follower round (every node runs them, the leader too) and every pass.
    const skew = this.clockSkew?.check();
    if (skew !== undefined) notes.push(skew);
    const detail = [...problems, ...notes].join('; ');
    if (detail === this.healthNote) return;
    this.healthNote = detail;
    this.deps.health(problems.length === 0, detail || undefined);
  }
}

/**
 * A loop's wake-up: `wait` sleeps up to `ms`, but a kick (a change worth acting on) shortens it
 * to `coalesceMs`, so a burst of changes is acted on once. A kick while the loop is busy is
 * remembered for its next wait.
 */
export class Wakeup {
  private wake: (() => void) | undefined;
  private pending = false;

  constructor(private readonly coalesceMs: number) {}

  /** Asks the loop to act soon. */
  kick(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  /** Waits `ms`, or `coalesceMs` after a kick, or until `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      let timer: NodeJS.Timeout | undefined;
      let kicked = false;
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const shorten = (): void => {
        if (kicked) return;
        kicked = true;
        if (timer) clearTimeout(timer);
        timer = setTimeout(done, this.coalesceMs);
      };
      timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.wake = shorten;
      if (this.pending) {
        this.pending = false;
        shorten();
      }
    });
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
