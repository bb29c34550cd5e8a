import fs from 'node:fs';
import path from 'node:path';

/** Generated types, controllers and clients of agent-staticpod. */
export * as staticpod from './generated/podmin/agent/v1/staticpod';
/** Generated types, controllers and clients of agent-identity. */
export * as identity from './generated/podmin/agent/v1/identity';
/** Generated types, controllers and clients of agent-registry. */
export * as registry from './generated/podmin/agent/v1/registry';
/** Generated types, controllers and clients of agent-coordinator (local Unix socket). */
export * as coordinator from './generated/podmin/agent/v1/coordinator';
/** Generated types, controllers and clients of node-to-node coordination (mTLS, port 8081). */
export * as coordination from './generated/podmin/agent/v1/coordination';
/** Generated types, controllers and clients of agent-dns. */
export * as dns from './generated/podmin/agent/v1/dns';
/** Generated types, controllers and clients of agent-dataplane. */
export * as dataplane from './generated/podmin/agent/v1/dataplane';
/** Generated types of the Service snapshot `dns/services.pb` (a message schema, no service). */
export * as snapshot from './generated/podmin/agent/v1/snapshot';
/** Generated types of rollout reports and admissions (shared by coordinator and coordination). */
export * as rollout from './generated/podmin/agent/v1/rollout';
/** Conversions between rollout messages and `@podmin/util-rollout`'s types. */
export * from './rollout-messages';

export * from './services';
export * from './supervisor-messages';

/** Generated types and client interface of kubelet's local Pods API (v1alpha1). */
export * as kubeletPods from './generated/k8s/kubelet/pods/v1alpha1/api';
/** Generated types of the v1.Pod subset carried by kubelet's Pods API. */
export * as corev1 from './generated/k8s/api/core/v1/pod';

/** The protobuf package of every agent contract. */
export const AGENT_PROTO_PACKAGE = 'podmin.agent.v1';

/** The .proto files of the agent contracts, relative to `protoRoot()`. */
export const PROTO_FILES = {
  staticpod: 'podmin/agent/v1/staticpod.proto',
  identity: 'podmin/agent/v1/identity.proto',
  registry: 'podmin/agent/v1/registry.proto',
  coordinator: 'podmin/agent/v1/coordinator.proto',
  /** Node-to-node coordination (package `podmin.agent.v1`, service `Coordination`). */
  coordination: 'podmin/agent/v1/coordination.proto',
  dns: 'podmin/agent/v1/dns.proto',
  dataplane: 'podmin/agent/v1/dataplane.proto',
  /** The Service snapshot `dns/services.pb` (message `ServiceSnapshot`). */
  snapshot: 'podmin/agent/v1/snapshot.proto',
  /** kubelet's Pods API (package `v1alpha1`, service `Pods`). */
  kubeletPods: 'k8s/kubelet/pods/v1alpha1/api.proto',
  /** The v1.Pod subset (package `k8s.io.api.core.v1`, message `Pod`). */
  corev1Pod: 'k8s/api/core/v1/pod.proto',
} as const;

/**
 * Directory holding the .proto files at run time: `proto/` beside a bundled program
 * (tools/scripts/bundle.mjs copies them), else this library's source tree.
 */
export function protoRoot(): string {
  const candidates = [path.join(__dirname, 'proto'), path.join(__dirname, '..', 'proto')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, PROTO_FILES.staticpod)));
  if (!found)
    throw new Error(`locating the agent .proto files: none of ${candidates.join(', ')} has them`);
  return found;
}
