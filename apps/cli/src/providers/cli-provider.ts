import type { ClusterContext } from '@podmin/cli-util-config';
import type { ConnectProvider } from '@podmin/cli-feature-context';
import type { SecretStoreOpener } from '@podmin/cli-feature-secrets';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { CliContext } from '../cli-context';

/** `podmin setup`'s flags; each provider checks the ones it takes. */
export interface SetupRequest {
  nodegroups?: readonly string[];
  vpcCidr?: string;
  nat64?: string;
  workloadCaPublish?: string;
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
}

/** Builds a provider once per CLI run from the shell's context (reporter, dirs, env, stores). */
export type CliProviderFactory = (ctx: CliContext) => CliProvider;
