import type {
  CoordinationPeer,
  HelloAnswer,
  HelloHandler,
  HelloReport,
} from '../coordinator.ports';
import type { Admission } from '@podmin/util-rollout';
import type { ServiceSnapshot } from '../snapshot/snapshot-codec';
import { CoordinationError } from './coordination-error';
import type { EndpointTable } from './endpoint-table';

/** What the leader's Hello handler reads besides the endpoint table. */
export interface LeaderHelloDeps {
  readonly table: EndpointTable;
  /** This node's id, answered as `leaderId`. */
  readonly nodeId: string;
  /** True while this node holds a valid leadership term. */
  isLeader(): boolean;
  /** The leader this node knows of (for the refusal's message), if any. */
  knownLeader(): { readonly id: string; readonly addr: string } | undefined;
  /** The snapshot last computed (or restored), if any. */
  snapshot(): ServiceSnapshot | undefined;
  /** Rollouts: takes the follower's report, answers its admissions. */
  readonly rollouts?: {
    record(nodeId: string, report: HelloReport): void;
    answer(nodeId: string): readonly Admission[];
  };
}

/**
 * The leader's {@link HelloHandler}: PRECONDITION_FAILED naming the known leader unless this
 * node leads; otherwise the report goes into the endpoint table and the answer carries the
 * latest snapshot (omitted when the caller holds its revision) and the refused endpoints.
 */
export class LeaderHelloHandler implements HelloHandler {
  constructor(private readonly deps: LeaderHelloDeps) {}

  hello(peer: CoordinationPeer, report: HelloReport): Promise<HelloAnswer> {
    if (!this.deps.isLeader()) {
      const leader = this.deps.knownLeader();
      const known =
        leader === undefined || leader.id === this.deps.nodeId
          ? 'no leader is known'
          : `the leader is ${leader.id} at ${leader.addr}`;
      return Promise.reject(
        new CoordinationError(
          'PRECONDITION_FAILED',
          `answering Hello of node ${peer.nodeId}: node ${this.deps.nodeId} does not lead; ${known}`,
        ),
      );
    }
    try {
      const outcome = this.deps.table.report(peer, report);
      this.deps.rollouts?.record(peer.nodeId, report);
      const snapshot = this.deps.snapshot();
      return Promise.resolve({
        snapshot:
          snapshot !== undefined && snapshot.revision === report.knownRevision
            ? undefined
            : snapshot,
        leaderId: this.deps.nodeId,
        refused: outcome.refused,
        admissions: this.deps.rollouts?.answer(peer.nodeId) ?? [],
      });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
