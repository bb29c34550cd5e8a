import fs from 'node:fs';
import path from 'node:path';

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
