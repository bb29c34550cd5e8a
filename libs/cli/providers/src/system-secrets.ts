import { randomBytes } from 'node:crypto';
import type { ClusterContext } from '@podmin/cli-util-config';
import type { ProviderShell } from './cli-provider';

/**
 * Stores the workload and cluster CAs create-only in the context's default secret store
 * (Parameter Store names), the same way on every provider.
 */
export async function storeSystemSecrets(
  ctx: ProviderShell,
  context: ClusterContext,
): Promise<void> {
  const { storeSetupSecrets } = await import('@podmin/cli-feature-secrets');
  const { createClusterCa, serializeClusterCaSecret } = await import('@podmin/util-pki');
  const store = await ctx.secretStores(context)('aws-parameter-store');
  const secrets = await storeSetupSecrets(store, context.cluster, {
    workloadCaKey: randomBytes(32),
    clusterCa: serializeClusterCaSecret(await createClusterCa(context.cluster, new Date())),
  });
  for (const name of secrets.created) ctx.reporter.info(`Stored ${name} (create-only)`);
  for (const name of secrets.kept) ctx.reporter.info(`Kept existing ${name}`);
}
