import type { LocalImageStore } from '@podmin/cli-data-access-image-store';
import type {
  CliEnvironment,
  ClusterContext,
  ContextStore,
  PodminDirs,
} from '@podmin/cli-util-config';
import type { ConnectProvider } from '@podmin/cli-feature-context';
import type { SecretStoreOpener } from '@podmin/cli-feature-secrets';
import type { Reporter } from '@podmin/cli-util-io';
import type { ObjectStore } from '@podmin/data-access-object-store';

/** `podmin setup`'s flags; each provider checks the ones it takes. */
export interface SetupRequest {
  nodegroups?: readonly string[];
  vpcCidr?: string;
  nat64?: string;
  workloadCaPublish?: string;
  /** `--otel-logs endpoint=URL[,protocol=…][,mtls=…][,ca=…][,headers-secret=…]` (AWS). */
  otelLogs?: string;
  /** AWS: a podmin checkout whose agent artifact is built and published instead of the release. */
  agentSource?: string;
  assumeYes: boolean;
}

/** A cluster's lifecycle on one provider: what setup, teardown and destroy run. */
export interface ClusterLifecycle {
  /** Creates or updates the cluster's compute (and its CAs, create-only). */
  setup(request: SetupRequest): Promise<void>;
  /** Stops the cluster's compute; the bucket, context and CAs are kept. */
  teardown(request: { assumeYes: boolean }): Promise<void>;
  /** Removes the cluster for good: compute, CAs, bucket, then its context. */
  destroy(request: { assumeYes: boolean }): Promise<void>;
}

/**
 * Everything the CLI asks of a provider (aws, local, and later e.g. Google Cloud): what
 * `connect` verifies, the bucket and secret stores of a context, and the cluster lifecycle.
 */
export interface CliProvider {
  /** What `connect` verifies (loaded when connect runs, so other commands start faster). */
  connect(): Promise<ConnectProvider>;
  /** Opens a context's bucket as an object store. */
  openObjectStore(context: ClusterContext): Promise<ObjectStore>;
  /** Opens a context's secret stores by secrets-provider name. */
  secretStores(context: ClusterContext): SecretStoreOpener;
  /** The lifecycle of a context's cluster. */
  lifecycle(context: ClusterContext): ClusterLifecycle;
  /**
   * Where `podmin logs` reads a NodeGroup's container logs: the nodes whose files this machine
   * reads (local), or what to do instead (a cloud's nodes). Absent: the guidance is generic.
   */
  containerLogs?(context: ClusterContext, nodegroup: string): Promise<ContainerLogAccess>;
}

/** A node whose kubelet log files and static Pods this machine reads. */
export interface LogNode {
  /** The node ID receipts and `--node` use. */
  nodeId: string;
  /** The node name kubelet runs with (static Pod names end with `-<node name>`). */
  nodeName: string;
  /** The node's static Pod directory. */
  manifestsDir: string;
  /** kubelet's Pod log directory. */
  podLogDir: string;
}

/** `containerLogs`' answer: readable nodes, or guidance printed instead of logs. */
export type ContainerLogAccess = { nodes: LogNode[] } | { guidance: string[] };

/**
 * What a provider gets from the CLI shell that builds it: the reporter, directories and
 * environment of this run, and the shell's openers (which go back through the providers, so a
 * provider's setup can open the bucket and secret stores of the context it sets up).
 */
export interface ProviderShell {
  reporter: Reporter;
  dirs: PodminDirs;
  env: CliEnvironment;
  /** The saved contexts (`destroy` removes its cluster's context last). */
  contexts: ContextStore;
  /** A context's bucket, opened by its provider. */
  openBucket(context: ClusterContext): Promise<ObjectStore>;
  /** A context's secret stores, opened by its provider. */
  secretStores(context: ClusterContext): SecretStoreOpener;
  /** The local OCI image store in the cache directory (`<cache>/oci`). */
  imageStore(): Promise<LocalImageStore>;
}

/** Builds a provider once per CLI run from the shell (reporter, dirs, env, stores). */
export type CliProviderFactory = (shell: ProviderShell) => CliProvider;
