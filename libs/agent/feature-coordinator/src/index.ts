/** The s3lect record `dns/leader.json`: Go-compatible parser and writer. */
export * from './election/leader-record';
/** Ports (with Nest-ready injection tokens) of the election. */
export * from './election/election.ports';
/** ElectionError. */
export * from './election/election-error';
/** The elector: s3lect-compatible, judged on local monotonic time. */
export * from './election/elector';
export * from './election/elector-options';
export { DEFAULT_ELECTION_TIMING, type ElectionTiming } from './election/election-timing';
export type { DeposedReason } from './election/leader-term';
/** Tokens for leader-only duties. */
export * from './election/duty-gate';
/** System clocks and timer for the election ports. */
export * from './adapters/system-clocks';
/** The Service snapshot's canonical protobuf codec and its types (not the unchecked sealing computeSnapshot uses). */
export {
  MAX_SNAPSHOT_BYTES,
  compareServices,
  comparePorts,
  compareText,
  decodeSnapshot,
  encodeServices,
  encodeSnapshot,
  type DecodeOptions,
  type EncodedServices,
  type ServiceSnapshot,
  type SnapshotBackend,
  type SnapshotPort,
  type SnapshotService,
} from './snapshot/snapshot-codec';
/** Computing the snapshot: backend selection by namespace and equality selector. */
export * from './snapshot/compute-snapshot';
/** Reading and fenced writing of `dns/services.pb`; identities for DNS at startup. */
export * from './snapshot/snapshot-store';
/** Reading every Service payload of the desired state. */
export * from './snapshot/read-desired-services';
/** The snapshot's object-store port. */
export * from './snapshot/snapshot.ports';
/** SnapshotError, SnapshotCorruptError. */
export * from './snapshot/snapshot-error';
/** Ports of the coordinator process: readiness, coordination peers and Hello, the node leaf. */
export * from './coordinator.ports';
/** Readiness: the node's Ready Pods from kubelet's Pods API (the ReadinessSource adapter). */
export * from './readiness/kubelet-readiness';
export * from './readiness/ready-pods';
export * from './readiness/readiness-options';
/** Node-to-node coordination over mutual TLS 1.3: credentials, server, client, endpoint table. */
export * from './coordination';
/** The coordinator: the node's Services view, leading and following. */
export * from './coordinator/coordinator';
export {
  DRAIN_TIMEOUT_MS,
  type CoordinatorDeps,
  type CoordinatorOptions,
  type CoordinatorStore,
} from './coordinator/coordinator-options';
export * from './coordinator/wakeup';
export * from './coordinator/services-view';
/** The agent-coordinator process and its Nest module. */
export * from './coordinator/coordinator.module';
export * from './coordinator/coordinator.grpc-controller';
export * from './coordinator/coordinator.process';
/** Adapters: the node leaf from agent-identity, the mTLS transport. */
export * from './adapters/identity-node-leaf';
export * from './adapters/mtls-transport';
