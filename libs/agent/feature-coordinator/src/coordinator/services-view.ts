import { coordinator } from '@podmin/agent-contracts';
import { WATCH_SERVICES_MAX_WAIT_MS } from '@podmin/agent-util-config';
import {
  encodeServices,
  type ServiceSnapshot,
  type SnapshotService,
} from '../snapshot/snapshot-codec';
import { restoreIdentities } from '../snapshot/snapshot-store';

/** Where the node's view of the Services came from (the contract's enum). */
export type ViewSource = coordinator.ServicesView_Source;
/** The contract's Source values, by name. */
export const ViewSource = coordinator.ServicesView_Source;

/** The node's current view: a snapshot and its origin. */
export interface ServicesView {
  readonly snapshot: ServiceSnapshot;
  readonly source: ViewSource;
}

/** Longest a WatchServices long poll may wait, in milliseconds (the agent's constants). */
export const MAX_WATCH_MS = WATCH_SERVICES_MAX_WAIT_MS;

/** A snapshot of `services` with its revision computed and the given generation. */
export function snapshotOf(
  services: readonly SnapshotService[],
  generation: number,
): ServiceSnapshot {
  return { generation, revision: encodeServices(services).revision, services: [...services] };
}

/** The same Services with every backend removed (identities only: DNS keeps answering). */
export function withoutBackends(snapshot: ServiceSnapshot): ServiceSnapshot {
  return snapshotOf(restoreIdentities(snapshot), snapshot.generation);
}

/**
 * The node's one view of the Services, as agent-dns and agent-dataplane long-poll it: replaced
 * as a whole, watched by revision. A waiter is answered as soon as the revision differs from the
 * one it holds.
 */
export class ServicesViewHub {
  // Nothing known yet: an empty revision, which no real snapshot has (not even an empty one),
  // so a watcher holding nothing is answered by the first snapshot whatever it contains.
  private view: ServicesView = {
    snapshot: { generation: 0, revision: '', services: [] },
    source: ViewSource.NONE,
  };
  private identities: ServicesView = this.view;
  private readonly waiters = new Set<() => void>();

  /** The current view; with `identitiesOnly`, its Services without backends. */
  current(identitiesOnly = false): ServicesView {
    return identitiesOnly ? this.identities : this.view;
  }

  /** Replaces the view; true when its revision or source changed (waiters are woken then). */
  publish(snapshot: ServiceSnapshot, source: ViewSource): boolean {
    const before = this.view;
    this.view = { snapshot, source };
    const bare = withoutBackends(snapshot);
    // Keep the same object while names, VIPs and ports are unchanged, so identity watchers
    // (agent-dns) see one revision however often backends move.
    this.identities =
      bare.revision === this.identities.snapshot.revision && source === this.identities.source
        ? this.identities
        : { snapshot: bare, source };
    const changed =
      before.snapshot.revision !== snapshot.revision ||
      before.source !== source ||
      before.snapshot.generation !== snapshot.generation;
    if (changed) {
      const waiters = [...this.waiters];
      this.waiters.clear();
      for (const wake of waiters) wake();
    }
    return changed;
  }

  /**
   * The view once its revision differs from `knownRevision`, or `undefined` after `waitMs`
   * (or when `signal` aborts) with it unchanged.
   */
  async watch(
    knownRevision: string,
    waitMs: number,
    options: { identitiesOnly?: boolean; signal?: AbortSignal } = {},
  ): Promise<ServicesView | undefined> {
    const { signal } = options;
    const identitiesOnly = options.identitiesOnly ?? false;
    const now = (): ServicesView => this.current(identitiesOnly);
    if (now().snapshot.revision !== knownRevision) return now();
    const wait = Math.max(0, Math.min(MAX_WATCH_MS, waitMs));
    if (wait === 0) return undefined;
    return new Promise((resolve) => {
      const done = (view: ServicesView | undefined): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        signal?.removeEventListener('abort', abort);
        resolve(view);
      };
      // A change of source alone (same Services) does not answer a waiter: nothing it uses changed.
      const wake = (): void => {
        if (now().snapshot.revision !== knownRevision) done(now());
        else this.waiters.add(wake);
      };
      const abort = (): void => done(undefined);
      const timer = setTimeout(() => done(undefined), wait);
      this.waiters.add(wake);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
}
