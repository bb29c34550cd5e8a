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

export * from './proto-files';
export * from './proto-loader';
