import type { ServerTimeSample } from '@podmin/data-access-object-store';
import type { Admission, NodeDeploymentReport } from '@podmin/util-rollout';
import type { ServiceSnapshot } from './snapshot/snapshot-codec';
import type { ReadyEndpoint } from './snapshot/compute-snapshot';

/** One of this node's Pods that kubelet reports Ready (PodReady true) with an IPv6 address. */
export interface LocalReadyPod extends ReadyEndpoint {
  /** The Pod's name (for logs; selection is by namespace and labels). */
  readonly pod: string;
  /** Its `podmin.dev/revision` annotation, when it has one (a drain names Pods by it). */
  readonly revision?: string;
}

/** What the readiness watch can say about itself, for the coordinator's health. */
export interface ReadinessHealth {
  /** True while the watch is connected and synced (or deliberately off). */
  readonly ok: boolean;
  /** `watching`, `no-kubelet` (no Pods API socket: no endpoints), `reconnecting`. */
  readonly state: 'watching' | 'no-kubelet' | 'reconnecting';
  /** Why, in words (e.g. the socket path that is missing, the last error). */
  readonly detail: string;
}

/**
 * The node's Ready Pods as kubelet's Pods API reports them: a current set plus a coalesced
 * change signal. `run` keeps the watch alive (reconnects, periodic full resync) until aborted.
 */
export interface ReadinessSource {
  /** The current Ready Pods, sorted by address. */
  current(): readonly LocalReadyPod[];
  /** Calls `listener` after the set changed (bursts coalesced); returns an unsubscribe. */
  onChange(listener: () => void): () => void;
  health(): ReadinessHealth;
  run(signal: AbortSignal): Promise<void>;
}

/**
 * The bucket's clock as last seen in responses the node gets anyway (an `ObjectStore` with
 * `lastServerTime` fits): the coordinator compares it with this node's clock.
 */
export interface ServerTimeSource {
  /** The latest sample, or undefined before the first response that carried the server's time. */
  lastServerTime(): ServerTimeSample | undefined;
}

/** A coordination peer as its verified certificate names it (never from fields it sends). */
export interface CoordinationPeer {
  /** From the SPIFFE URI `spiffe://<cluster>.podmin.internal/nodegroup/<ng>/node/<id>`. */
  readonly cluster: string;
  readonly nodegroup: string;
  readonly nodeId: string;
  /** The certificate's IPv6 IP SANs, canonical RFC 5952 text. */
  readonly addresses: readonly string[];
  /** The address the connection came from, canonical, without port. */
  readonly remoteAddress: string;
}

/** A follower's report as the leader receives it (the contract's HelloRequest). */
export interface HelloReport {
  readonly nodeId: string;
  readonly nodegroup: string;
  readonly prefix: string;
  readonly endpoints: readonly LocalReadyPod[];
  readonly knownRevision: string;
  readonly leaving: boolean;
  /** What the node runs for each deployment of its NodeGroup (rollouts). */
  readonly rollouts: readonly NodeDeploymentReport[];
}

/** The leader's answer to a Hello. */
export interface HelloAnswer {
  /** Omitted when the caller already holds `knownRevision`. */
  readonly snapshot: ServiceSnapshot | undefined;
  readonly leaderId: string;
  readonly refused: readonly { readonly address: string; readonly reason: string }[];
  /** The leader's admissions for the caller's rollouts. */
  readonly admissions: readonly Admission[];
}

/**
 * Handles one authenticated Hello on the leader. Throws PodminError PRECONDITION_FAILED when
 * this node does not lead, ACCESS_DENIED when the report does not match the peer.
 */
export interface HelloHandler {
  hello(peer: CoordinationPeer, report: HelloReport): Promise<HelloAnswer>;
}

/** The node's in-memory coordination leaf (agent-identity's GetNodeCertificate). */
export interface NodeLeaf {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  /** The cluster CA certificate peers are verified against. */
  readonly caPem: string;
  readonly notAfter: Date;
}

/** Where the coordinator gets (and renews) its leaf. */
export interface NodeLeafSource {
  /** A leaf valid now; a new one once the previous one is past its renewal point. */
  leaf(): Promise<NodeLeaf>;
}

/** A running coordination server. */
export interface CoordinationServing {
  /** `[host]:port` it is bound to. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The mTLS coordination transport: serves this node's Hello handler on `[node IPv6]:port` and
 * calls the leader's. Certificates come from the {@link NodeLeafSource}.
 */
export interface CoordinationTransport {
  /** Starts serving `handler`; resolves once bound. */
  serve(handler: HelloHandler): Promise<CoordinationServing>;
  /** One Hello to the leader at `addr` (`[ipv6]:port`); PodminError on failure or refusal. */
  hello(addr: string, report: HelloReport, timeoutMs: number): Promise<HelloAnswer>;
  /** Closes client channels. */
  close(): void;
}
