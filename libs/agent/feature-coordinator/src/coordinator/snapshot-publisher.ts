import { readIndexIfChanged } from '@podmin/data-access-desired-state';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import type { ReadinessSource } from '../coordinator.ports';
import type { EndpointTable } from '../coordination/endpoint-table';
import type { DutyGate } from '../election/duty-gate';
import type { LeadershipTerm, MonotonicClock } from '../election/election.ports';
import { errorMessage } from '../error-message';
import type { RolloutCoordinator } from '../rollout/rollout-coordinator';
import { computeSnapshot, type NodeEndpoints } from '../snapshot/compute-snapshot';
import { readDesiredServices, type DesiredServices } from '../snapshot/read-desired-services';
import type { ServiceSnapshot } from '../snapshot/snapshot-codec';
import { SnapshotCorruptError } from '../snapshot/snapshot-error';
import {
  readSnapshot,
  snapshotVersionOf,
  writeSnapshot,
  type SnapshotVersion,
  type SnapshotWrite,
} from '../snapshot/snapshot-store';
import type { CoordinatorStore, ResolvedCoordinatorOptions } from './coordinator-options';
import { ViewSource, type ServicesViewHub } from './services-view';
import { Wakeup } from './wakeup';

/** What the leader's snapshot passes work with. */
export interface SnapshotPublisherDeps {
  readonly store: CoordinatorStore;
  readonly readiness: ReadinessSource;
  /** The followers' reports. */
  readonly endpoints: EndpointTable;
  readonly monotonic: MonotonicClock;
  readonly log: StructuredLogger;
  /** Checked before every write: a pass writes only within the term it runs for. */
  readonly gate: DutyGate;
  /** Where each pass's snapshot is published to this node's processes. */
  readonly view: ServicesViewHub;
  readonly rollouts: RolloutCoordinator;
  /** Aborted when the coordinator stops: no pass starts after it. */
  readonly stopping: AbortSignal;
  /** A pass that reached the bucket counts as contact with the leader (this node). */
  readonly heard: () => void;
  /** Called after a pass's result is known, so health follows it. */
  readonly reportHealth: () => void;
}

/** The fence of this term's next write: the stored snapshot's version, and whether it is known. */
interface Fence {
  previous: SnapshotVersion | undefined;
  fresh: boolean;
}

/**
 * The leader's snapshot passes: from the complete desired Services and every node's Ready
 * endpoints, compute the snapshot and write it to `dns/services.pb`, fenced by the stored ETag
 * and the term's duty token, then publish it to the node's view and plan the rollouts. A pass
 * runs at least every `snapshotIntervalMs` and soon after a {@link kick}.
 */
export class SnapshotPublisher {
  private readonly wakeup: Wakeup;
  /** Snapshot passes started so far, and who waits for one that starts after a given pass. */
  private passes = 0;
  private passWaiters: Array<{ after: number; resolve: (failure: string | undefined) => void }> =
    [];
  private desired: DesiredServices | undefined;
  /** Set at shutdown: this node's own endpoints are left out of every later snapshot pass. */
  private draining = false;
  private failedWith: string | undefined;

  constructor(
    private readonly deps: SnapshotPublisherDeps,
    private readonly options: Pick<
      ResolvedCoordinatorOptions,
      'cluster' | 'nodeId' | 'prefix' | 'snapshotIntervalMs' | 'coalesceMs'
    >,
  ) {
    this.wakeup = new Wakeup(options.coalesceMs);
  }

  /** Why the last pass of this term failed; undefined once one succeeds. */
  get lastPassError(): string | undefined {
    return this.failedWith;
  }

  /** Asks for a pass soon (something a snapshot is computed from changed). */
  kick(): void {
    this.wakeup.kick();
  }

  /** Leaves this node's own endpoints out of every later pass (the leader's drain). */
  startDraining(): void {
    this.draining = true;
  }

  /**
   * Starts a pass soon and waits for one that starts after this call: undefined when it
   * succeeded, else why it failed or that none ran within `timeoutMs`.
   */
  async nextPass(timeoutMs: number): Promise<string | undefined> {
    const after = this.passes;
    let timer: NodeJS.Timeout | undefined;
    const pass = new Promise<string | undefined>((resolve) =>
      this.passWaiters.push({ after, resolve }),
    );
    this.wakeup.kick();
    const failure = await Promise.race([
      pass,
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no snapshot pass within ${timeoutMs} ms`), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return failure;
  }

  /** One term of leadership: snapshot passes until the term ends. */
  async lead(term: LeadershipTerm): Promise<void> {
    const fence: Fence = { previous: undefined, fresh: false };
    this.failedWith = undefined;
    this.deps.rollouts.startTerm();
    while (!term.signal.aborted && !this.deps.stopping.aborted) {
      const pass = ++this.passes;
      let failure: string | undefined;
      try {
        if (!(await this.pass(term, fence))) break;
        failure = undefined;
      } catch (err) {
        failure = errorMessage(err);
        if (this.passFailed(err, term, fence) === 'retry') continue;
      }
      this.passEnded(pass, failure);
      await this.wakeup.wait(this.options.snapshotIntervalMs, term.signal);
    }
  }

  /** One pass: compute, write if it changed, publish, plan rollouts. False: no longer leading. */
  private async pass(term: LeadershipTerm, fence: Fence): Promise<boolean> {
    if (!fence.fresh) {
      fence.previous = await this.readVersion();
      fence.fresh = true;
    }
    const desired = await this.readDesired(term.signal);
    const computed = computeSnapshot({
      cluster: this.options.cluster,
      services: desired.services,
      nodes: this.nodes(),
    });
    for (const r of computed.refused) this.deps.log.event('warn', 'refuse endpoint', { ...r });
    const token = this.deps.gate.current();
    if (token === undefined || token.term !== term.term) {
      this.deps.log.event('warn', 'refuse snapshot write', {
        reason: 'this node no longer leads',
        term: term.term,
      });
      return false;
    }
    const result = await writeSnapshot(this.deps.store, computed.snapshot, fence.previous, token);
    this.deps.heard();
    this.publish(result, computed.snapshot, fence);
    this.passResult(undefined);
    await this.deps.rollouts
      .plan(token, desired.entries, term.signal)
      .catch((err: unknown) => this.deps.rollouts.failed(err));
    return true;
  }

  /** Publishes what the pass wrote, or (unchanged) what it computed under the stored generation. */
  private publish(result: SnapshotWrite, computed: ServiceSnapshot, fence: Fence): void {
    if (result.status !== 'written') {
      this.deps.view.publish(
        { ...computed, generation: fence.previous?.generation ?? 0 },
        ViewSource.LEADER,
      );
      return;
    }
    fence.previous = {
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
    this.deps.view.publish(result.snapshot, ViewSource.LEADER);
  }

  /** Judges a failed pass; 'retry' runs the next one at once (over a corrupt object). */
  private passFailed(err: unknown, term: LeadershipTerm, fence: Fence): 'retry' | 'wait' {
    if (err instanceof SnapshotCorruptError) {
      // Replace it: an unconditional-looking write still fenced by the corrupt object's ETag.
      fence.previous = { etag: err.etag, generation: 0 };
      fence.fresh = true;
      this.deps.log.event('warn', 'replace corrupt snapshot', { etag: err.etag });
      return 'retry';
    }
    if (hasCode(err, 'PRECONDITION_FAILED')) {
      this.deps.log.event('warn', 'refuse snapshot write', { error: errorMessage(err) });
      fence.fresh = false;
    } else if (hasCode(err, 'CONFLICT')) {
      fence.fresh = false;
    } else if (term.signal.aborted) {
      // The term ended mid-pass (a frozen leader resuming past its deadline): the duty gate
      // refuses what this pass would have written.
      this.deps.log.event('warn', 'refuse snapshot write', {
        reason: 'this node stopped leading during the pass',
        term: term.term,
      });
    } else {
      this.deps.log.event('warn', 'snapshot pass failed', { error: errorMessage(err) });
      this.passResult(errorMessage(err));
    }
    return 'wait';
  }

  private passResult(error: string | undefined): void {
    this.failedWith = error;
    this.deps.reportHealth();
  }

  /** Tells whoever waits for a pass that started after they began waiting how it ended. */
  private passEnded(pass: number, failure: string | undefined): void {
    const ready = this.passWaiters.filter((w) => pass > w.after);
    this.passWaiters = this.passWaiters.filter((w) => pass <= w.after);
    for (const w of ready) w.resolve(failure);
  }

  /** Every node's endpoints: the followers' reports plus this node's own Ready Pods. */
  private nodes(): NodeEndpoints[] {
    return this.deps.endpoints.nodes({
      nodeId: this.options.nodeId,
      prefix: this.options.prefix,
      endpoints: this.draining
        ? []
        : this.deps.rollouts.withoutDraining(this.deps.readiness.current()),
    });
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
}
