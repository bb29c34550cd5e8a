import type { StructuredLogger } from '@podmin/agent-util-logging';
import { ELECTION_LEASE_MS, checkPodPrefix } from '@podmin/agent-util-config';
import { formatIpv6, isDnsLabel, parseIpv6 } from '@podmin/util-names';
import type { MonotonicClock } from '../election/election.ports';
import type { CoordinationPeer, HelloReport, LocalReadyPod } from '../coordinator.ports';
import type { NodeEndpoints } from '../snapshot/compute-snapshot';
import { CoordinationError } from './coordination-error';
import { errorMessage } from '../error-message';

/** Why the leader refused one reported endpoint. */
export type EndpointRefusalReason =
  'bad-address' | 'not-canonical' | 'outside-prefix' | 'duplicate' | 'bad-namespace';

/** One refused endpoint of a report (the HelloAnswer's `refused`). */
export interface EndpointRefusal {
  readonly address: string;
  readonly reason: EndpointRefusalReason;
}

/** What the table did with one report. */
export interface ReportOutcome {
  /** Endpoints kept (the rest of the report), canonical and sorted by address. */
  readonly accepted: readonly LocalReadyPod[];
  readonly refused: readonly EndpointRefusal[];
}

/** Settings of the endpoint table. */
export interface EndpointTableOptions {
  /** A node not heard from within this is dropped (default 35 s, the election's lease). */
  readonly leaseMs?: number;
  /** Accept unique-local (fc00::/7) prefixes: the local provider's stand-in for global unicast. */
  readonly allowUniqueLocal?: boolean;
}

/** Default lease of a node's report: the leader lease of DESIGN §6.8. */
export const DEFAULT_ENDPOINT_LEASE_MS = ELECTION_LEASE_MS;

interface Entry {
  nodegroup: string;
  prefix: string;
  endpoints: readonly LocalReadyPod[];
  lastSeenMs: number;
  /** Canonical text of prefix and endpoints, to tell a change from a refresh. */
  key: string;
}

/**
 * The leader's table of node reports, the core of its HelloHandler: per node its /80, its
 * accepted Ready endpoints and when it was last heard from (local monotonic time). Pure: no
 * timers; {@link expire} (also run by {@link nodes} and {@link report}) drops nodes past the lease.
 */
export class EndpointTable {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  readonly leaseMs: number;
  private readonly allowUniqueLocal: boolean;

  constructor(
    private readonly deps: { readonly monotonic: MonotonicClock; readonly log?: StructuredLogger },
    options: EndpointTableOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_ENDPOINT_LEASE_MS;
    this.allowUniqueLocal = options.allowUniqueLocal ?? false;
  }

  /**
   * Takes one authenticated report. ACCESS_DENIED when the report names another node or
   * NodeGroup than the peer's certificate, INVALID_ARGUMENT for a prefix that is not a
   * canonical /80 (the node's previous report stays until it expires). Each endpoint that is
   * not canonical IPv6 inside the prefix is refused and logged (`refuse endpoint`); the rest
   * are kept. `leaving` drops the node.
   */
  report(peer: CoordinationPeer, report: HelloReport): ReportOutcome {
    this.expire();
    if (peer.nodeId !== report.nodeId || peer.nodegroup !== report.nodegroup) {
      throw new CoordinationError(
        'ACCESS_DENIED',
        `accepting the report of node ${JSON.stringify(report.nodeId)} (NodeGroup ${JSON.stringify(report.nodegroup)}): the peer's certificate names node ${peer.nodeId} of NodeGroup ${peer.nodegroup}`,
        { fault: 'user' },
      );
    }
    if (report.leaving) {
      const had = this.entries.get(report.nodeId)?.endpoints.length;
      if (this.entries.delete(report.nodeId)) {
        this.deps.log?.event('info', 'drop leaving node endpoints', {
          node: report.nodeId,
          endpoints: had ?? 0,
        });
        this.changed();
      }
      return { accepted: [], refused: [] };
    }
    const why = checkPodPrefix(report.prefix, this.allowUniqueLocal);
    if (why !== undefined) {
      throw new CoordinationError(
        'INVALID_ARGUMENT',
        `accepting the report of node ${report.nodeId}: prefix ${why}`,
        { fault: 'user' },
      );
    }
    const network = (parseIpv6(report.prefix.slice(0, -3)) ?? []).slice(0, 5);
    const accepted = new Map<string, LocalReadyPod>();
    const refused: EndpointRefusal[] = [];
    for (const endpoint of report.endpoints) {
      const reason = this.check(endpoint, network, accepted);
      if (reason === undefined) {
        accepted.set(endpoint.address, {
          namespace: endpoint.namespace,
          pod: endpoint.pod,
          labels: { ...endpoint.labels },
          address: endpoint.address,
        });
        continue;
      }
      refused.push({ address: endpoint.address, reason });
      this.deps.log?.event('warn', 'refuse endpoint', {
        node: report.nodeId,
        address: endpoint.address,
        reason,
        prefix: report.prefix,
      });
    }
    const endpoints = [...accepted.values()].sort((a, b) => compareGroups(a.address, b.address));
    const key = JSON.stringify([report.prefix, endpoints.map(endpointKey)]);
    const previous = this.entries.get(report.nodeId);
    this.entries.set(report.nodeId, {
      nodegroup: report.nodegroup,
      prefix: report.prefix,
      endpoints,
      lastSeenMs: this.deps.monotonic.nowMs(),
      key,
    });
    if (previous?.key !== key) this.changed();
    return { accepted: endpoints, refused };
  }

  /** Drops every node not heard from within the lease; returns their ids. */
  expire(): string[] {
    const now = this.deps.monotonic.nowMs();
    const gone: string[] = [];
    for (const [nodeId, entry] of this.entries) {
      if (now - entry.lastSeenMs >= this.leaseMs) {
        this.entries.delete(nodeId);
        gone.push(nodeId);
        this.deps.log?.event('info', 'expire node endpoints', {
          node: nodeId,
          silentMs: now - entry.lastSeenMs,
        });
      }
    }
    if (gone.length > 0) this.changed();
    return gone;
  }

  /**
   * The live reports, sorted by node id, for `computeSnapshot`; `local` (the leader's own node,
   * which does not Hello itself) is added, replacing any entry of the same id.
   */
  nodes(local?: NodeEndpoints): NodeEndpoints[] {
    this.expire();
    const out: NodeEndpoints[] = [];
    for (const [nodeId, entry] of this.entries) {
      if (local && nodeId === local.nodeId) continue;
      out.push({ nodeId, prefix: entry.prefix, endpoints: entry.endpoints });
    }
    if (local) out.push(local);
    return out.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  /** Monotonic time a node was last heard from, or undefined. */
  lastSeenMs(nodeId: string): number | undefined {
    return this.entries.get(nodeId)?.lastSeenMs;
  }

  /** Calls `listener` after the table's content changed (not on a mere refresh); returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private check(
    endpoint: LocalReadyPod,
    network: readonly number[],
    accepted: ReadonlyMap<string, LocalReadyPod>,
  ): EndpointRefusalReason | undefined {
    const groups = parseIpv6(endpoint.address);
    if (groups === undefined) return 'bad-address';
    if (formatIpv6(groups) !== endpoint.address) return 'not-canonical';
    if (network.some((g, i) => groups[i] !== g)) return 'outside-prefix';
    if (!isDnsLabel(endpoint.namespace)) return 'bad-namespace';
    if (accepted.has(endpoint.address)) return 'duplicate';
    return undefined;
  }

  private changed(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.deps.log?.event('warn', 'endpoint listener failed', {
          error: errorMessage(err),
        });
      }
    }
  }
}

function endpointKey(e: LocalReadyPod): unknown {
  return [e.address, e.namespace, e.pod, Object.entries(e.labels).sort()];
}

/** Orders canonical addresses numerically (parse cannot fail: they were checked). */
function compareGroups(a: string, b: string): number {
  const ga = parseIpv6(a) ?? [];
  const gb = parseIpv6(b) ?? [];
  for (let i = 0; i < 8; i++) {
    const d = (ga[i] ?? 0) - (gb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
