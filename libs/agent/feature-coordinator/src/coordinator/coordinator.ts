import type {
  CoordinationPeer,
  CoordinationServing,
  HelloAnswer,
  HelloHandler,
  HelloReport,
} from '../coordinator.ports';
import { LeaderHelloHandler } from '../coordination/leader-hello-handler';
import { DutyGate } from '../election/duty-gate';
import { errorMessage } from '../error-message';
import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import { RolloutCoordinator, type DrainingPod } from '../rollout/rollout-coordinator';
import { readSnapshot, restoreIdentities } from '../snapshot/snapshot-store';
import { CoordinatorHealth } from './coordinator-health';
import {
  resolveCoordinatorOptions,
  type CoordinatorDeps,
  type CoordinatorOptions,
  type ResolvedCoordinatorOptions,
} from './coordinator-options';
import { drainEndpoints } from './drain';
import { Follower } from './follower';
import { ServicesViewHub, ViewSource, snapshotOf } from './services-view';
import { SnapshotPublisher } from './snapshot-publisher';

/** This node's part in the election, for GetLeadership. */
export interface LeadershipView {
  readonly leader: boolean;
  readonly leaderId: string;
  readonly leaderAddr: string;
  readonly validForMs: number;
}

/**
 * The agent-coordinator's core: restores Service identities from `dns/services.pb`, runs the
 * election, and then either leads (computes and writes fenced snapshots from the complete index
 * and every node's ready endpoints: {@link SnapshotPublisher}) or follows (reports this node's
 * ready Pods to the leader and takes its snapshots, clearing backends when no leader has
 * answered within the lease: {@link Follower}). The node's view is published to agent-dns and
 * agent-dataplane through {@link view}.
 */
export class Coordinator implements HelloHandler {
  /** The node's current Services view (long-polled over the Coordinator contract). */
  readonly view = new ServicesViewHub();
  /** Rollouts: this node's report and admissions; on the leader, the waves (DESIGN §6.12). */
  readonly rollouts: RolloutCoordinator;
  private readonly options: ResolvedCoordinatorOptions;
  private readonly helloHandler: LeaderHelloHandler;
  private readonly publisher: SnapshotPublisher;
  private readonly follower: Follower;
  private readonly health: CoordinatorHealth;
  private readonly stopping = new AbortController();
  /** Ends the follower rounds first at shutdown, so no report follows the leaving one. */
  private readonly followStop = new AbortController();
  private serving: CoordinationServing | undefined;
  private electing: Promise<void> | undefined;
  private following: Promise<void> | undefined;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly deps: CoordinatorDeps,
    options: CoordinatorOptions,
  ) {
    this.options = resolveCoordinatorOptions(options);
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
    const shared = { ...deps, view: this.view, rollouts: this.rollouts };
    const reportHealth = (): void => this.health.report();
    this.follower = new Follower({ ...shared, reportHealth }, this.options);
    this.publisher = new SnapshotPublisher(
      {
        ...shared,
        gate: new DutyGate(deps.elector),
        stopping: this.stopping.signal,
        heard: () => this.follower.heard(),
        reportHealth,
      },
      this.options,
    );
    this.health = new CoordinatorHealth({
      ...deps,
      lastPassError: () => this.publisher.lastPassError,
      leaderUnreachable: () => this.follower.leaderUnreachable,
    });
    this.helloHandler = this.leaderHelloHandler();
  }

  /** Startup in the spec's order: restore identities, serve coordination, elect, then reconcile. */
  async start(): Promise<void> {
    await this.restore();
    this.serving = await this.deps.transport.serve(this);
    this.deps.log.event('info', 'serve coordination', { address: this.serving.address });
    this.unsubscribe.push(
      this.deps.elector.onElected((term) => void this.publisher.lead(term)),
      this.deps.endpoints.onChange(() => this.publisher.kick()),
      this.deps.readiness.onChange(() => {
        this.publisher.kick();
        this.follower.kick();
      }),
    );
    void this.deps.readiness
      .run(this.stopping.signal)
      .catch((err: unknown) =>
        this.deps.log.event('error', 'readiness watch ended', { error: errorMessage(err) }),
      );
    this.electing = this.deps.elector.run(this.stopping.signal);
    this.following = this.follower.run(this.followStop.signal);
  }

  /**
   * Shutdown, the spec's drain: stop reporting, then tell the leader this node's endpoints are
   * leaving and wait for its acknowledgement (a follower's leaving Hello answered; the leader's
   * own snapshot pass without them written), bounded by `drainTimeoutMs`; then resign (the
   * elector does on abort) and close the server.
   */
  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.publisher.startDraining();
    this.followStop.abort();
    await this.following;
    await drainEndpoints({
      ...this.deps,
      nodeId: this.options.nodeId,
      timeoutMs: this.options.drainTimeoutMs,
      sayLeaving: (addr, timeoutMs) =>
        this.deps.transport.hello(
          addr,
          { ...this.follower.report(), endpoints: [], leaving: true },
          timeoutMs,
        ),
      nextPass: (timeoutMs) => this.publisher.nextPass(timeoutMs),
    });
    this.stopping.abort();
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all([this.electing, this.following]);
    await this.serving?.close();
    this.deps.transport.close();
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
      this.publisher.kick();
      this.follower.kick();
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

  /** The leader's Hello handler, over this node's endpoint table, view and rollouts. */
  private leaderHelloHandler(): LeaderHelloHandler {
    const { elector } = this.deps;
    return new LeaderHelloHandler({
      table: this.deps.endpoints,
      nodeId: this.options.nodeId,
      isLeader: () => elector.isLeader(),
      knownLeader: () => elector.leader(),
      // Only what this node wrote as leader: a restored or expired view is not the leader's.
      snapshot: () => {
        const view = this.view.current();
        return view.source === ViewSource.LEADER ? view.snapshot : undefined;
      },
      rollouts: {
        record: (nodeId, report) => {
          if (report.leaving) this.rollouts.forget(nodeId);
          else if (this.rollouts.record(nodeId, report.nodegroup, report.rollouts))
            this.publisher.kick();
        },
        answer: (nodeId) => this.rollouts.answerFor(nodeId),
      },
    });
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
      this.deps.log.event('warn', 'restore Service identities failed', {
        error: errorMessage(err),
      });
    }
  }
}
