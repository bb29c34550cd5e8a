import type { ClusterContext } from '@podmin/cli-util-config';
import type {
  ArchitectureSource,
  PreflightDeps,
  PreflightSecretProvider,
} from '@podmin/cli-feature-deploy';
import type { PayloadCache } from '@podmin/data-access-desired-state';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { CliContext } from '../cli-context';

/** Node.js's name of this machine's architecture in podmin's words (amd64, arm64). */
export function hostArchitecture(arch: string = process.arch): string {
  return arch === 'x64' ? 'amd64' : arch;
}

/** What deploy's preflight loads for a context before any request (`preparePreflight`). */
export interface PreflightSources {
  architectures: ArchitectureSource;
  openSecretStore: (provider: PreflightSecretProvider) => Promise<{
    exists(name: string): Promise<boolean>;
  }>;
}

/**
 * Where a context's preflight looks: its secret stores (existence only) and, for the local
 * provider, this machine's architecture (its one node); other providers read the NodeGroup's
 * architecture from the infrastructure inputs in the bucket.
 */
export function preflightSources(ctx: CliContext, context: ClusterContext): PreflightSources {
  return {
    architectures:
      context.provider === 'local'
        ? { kind: 'host', arch: hostArchitecture() }
        : { kind: 'bucket' },
    openSecretStore: ctx.secretStores(context),
  };
}

/** What deploy's preflight reads for a context: its bucket plus {@link preflightSources}. */
export function preflightDeps(
  ctx: CliContext,
  context: ClusterContext,
  store: Pick<ObjectStore, 'get'>,
  payloadCache: PayloadCache,
): PreflightDeps {
  const { architectures, openSecretStore } = preflightSources(ctx, context);
  return {
    bucket: store,
    cluster: context.cluster,
    secretExists: async (provider, name) => (await openSecretStore(provider)).exists(name),
    architectures,
    payloadCache,
  };
}
