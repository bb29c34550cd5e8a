import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { CoordinationTransport, HelloReport, ReadinessSource } from '../coordinator.ports';
import type { MonotonicClock } from '../election/election.ports';
import type { Elector } from '../election/elector';
import { errorMessage } from '../error-message';
import type { RolloutCoordinator } from '../rollout/rollout-coordinator';
import { encodeServices, type ServiceSnapshot } from '../snapshot/snapshot-codec';
import type { ResolvedCoordinatorOptions } from './coordinator-options';
import { ViewSource, withoutBackends, type ServicesViewHub } from './services-view';
import { Wakeup } from './wakeup';

/** What the follower rounds work with. */
export interface FollowerDeps {
  readonly elector: Pick<Elector, 'isLeader' | 'leader' | 'settings'>;
  readonly transport: Pick<CoordinationTransport, 'hello'>;
  readonly readiness: ReadinessSource;
  readonly monotonic: MonotonicClock;
  readonly log: StructuredLogger;
  /** Where the leader's snapshots are published to this node's processes. */
  readonly view: ServicesViewHub;
  readonly rollouts: RolloutCoordinator;
  /** Called every round, so health follows contact with the leader. */
  readonly reportHealth: () => void;
}

/**
 * A follower's rounds: every `helloIntervalMs` (sooner after a {@link kick}) a Hello to the
 * leader reports this node's Ready Pods and rollouts and takes the leader's snapshot; when no
 * leader has been heard from within the lease, the view keeps its Services but loses its
 * backends. Every node runs the rounds; a leader skips the Hello.
 */
export class Follower {
  private readonly wakeup: Wakeup;
  private lastHeardMs: number;
  private unreachable: string | undefined;

  constructor(
    private readonly deps: FollowerDeps,
    private readonly options: Pick<
      ResolvedCoordinatorOptions,
      'nodeId' | 'nodegroup' | 'prefix' | 'helloIntervalMs' | 'helloTimeoutMs' | 'coalesceMs'
    >,
  ) {
    this.wakeup = new Wakeup(options.coalesceMs);
    this.lastHeardMs = deps.monotonic.nowMs();
  }

  /** Why the last Hello to the leader failed; undefined once one is answered. */
  get leaderUnreachable(): string | undefined {
    return this.unreachable;
  }

  /** Asks for a round soon (what this node reports changed). */
  kick(): void {
    this.wakeup.kick();
  }

  /** Notes contact with the leader now (this node's own snapshot pass counts). */
  heard(): void {
    this.lastHeardMs = this.deps.monotonic.nowMs();
  }

  /** What this node tells the leader in a Hello. */
  report(): HelloReport {
    const view = this.deps.view.current();
    return {
      nodeId: this.options.nodeId,
      nodegroup: this.options.nodegroup,
      prefix: this.options.prefix,
      endpoints: this.deps.rollouts.withoutDraining(this.deps.readiness.current()),
      knownRevision: view.source === ViewSource.LEADER ? view.snapshot.revision : '',
      leaving: false,
      rollouts: this.deps.rollouts.report(),
    };
  }

  /** Rounds until `signal` aborts: Hello to the leader, take its snapshot, clear after the lease. */
  async run(signal: AbortSignal): Promise<void> {
    const { elector } = this.deps;
    while (!signal.aborted) {
      const leader = elector.leader();
      if (!elector.isLeader() && leader && leader.id !== this.options.nodeId) {
        await this.helloLeader(leader.id, leader.addr);
      }
      if (!elector.isLeader()) this.expireBackends();
      this.deps.reportHealth();
      await this.wakeup.wait(this.options.helloIntervalMs, signal);
    }
  }

  /** Clears the leader's backends from the view once no leader was heard from within the lease. */
  private expireBackends(): void {
    const silentMs = this.deps.monotonic.nowMs() - this.lastHeardMs;
    const view = this.deps.view.current();
    if (silentMs <= this.deps.elector.settings.leaseMs || view.source !== ViewSource.LEADER) return;
    this.deps.view.publish(withoutBackends(view.snapshot), ViewSource.EXPIRED);
    this.deps.log.event('warn', 'clear backends', {
      reason: 'no leader heard from within the lease',
      silentMs: Math.round(silentMs),
      services: view.snapshot.services.length,
    });
  }

  private async helloLeader(id: string, addr: string): Promise<void> {
    try {
      const answer = await this.deps.transport.hello(
        addr,
        this.report(),
        this.options.helloTimeoutMs,
      );
      this.heard();
      if (this.unreachable !== undefined)
        this.deps.log.event('info', 'leader reachable again', { leader: id });
      this.unreachable = undefined;
      this.deps.rollouts.takeAnswer(answer.admissions);
      for (const r of answer.refused)
        this.deps.log.event('warn', 'leader refused endpoint', { leader: id, ...r });
      if (answer.snapshot !== undefined) this.takeSnapshot(id, answer.snapshot);
    } catch (err) {
      const message = errorMessage(err);
      if (this.unreachable === undefined)
        this.deps.log.event('warn', 'hello leader failed', { leader: id, addr, error: message });
      this.unreachable = message;
    }
  }

  /** Takes the leader's snapshot when it is consistent (its revision is its Services' digest). */
  private takeSnapshot(leader: string, snapshot: ServiceSnapshot): void {
    let revision: string;
    try {
      revision = encodeServices(snapshot.services).revision;
    } catch (err) {
      this.deps.log.event('warn', 'refuse leader snapshot', { leader, error: errorMessage(err) });
      return;
    }
    if (revision !== snapshot.revision) {
      this.deps.log.event('warn', 'refuse leader snapshot', {
        leader,
        error: `revision ${snapshot.revision} does not match its Services (${revision})`,
      });
      return;
    }
    if (this.deps.view.publish(snapshot, ViewSource.LEADER))
      this.deps.log.event('info', 'take snapshot', {
        leader,
        generation: snapshot.generation,
        revision: snapshot.revision.slice(0, 12),
        services: snapshot.services.length,
      });
  }
}
