import { openBucketStore, openS3Bucket, openSecretStores } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition } from '@podmin/agent-data-access-runtime';
import { PodminError } from '@podmin/util-errors';
import { systemSecretName } from '@podmin/data-access-secrets';
import { parseClusterCaSecret, parseWorkloadCaSecret, systemClock } from '@podmin/util-pki';
import { ObjectStoreExternalBundle, parseS3Url } from './adapters/object-store-external-bundle';
import { IdentityModule } from './identity.module';
import type { LeadershipCheck } from './identity.ports';
import type { AgentClient } from '@podmin/agent-data-access-grpc';

/** Secret-store names of the two CA secrets `podmin setup` stores create-only. */
export const WORKLOAD_CA_KEY_SECRET = 'workload-ca-key';
/** Secret-store key of the cluster coordination CA. */
export const CLUSTER_CA_SECRET = 'cluster-ca';

/** Leadership as the local coordinator judges it (the lease is its alone). */
export function coordinatorLeadership(
  coordinator: Pick<AgentClient<'coordinator'>, 'getLeadership'>,
): LeadershipCheck {
  return {
    async leading(minValidMs) {
      const view = await coordinator.getLeadership({}, { timeoutMs: 2000 });
      return view.leader && view.validForMs >= minValidMs;
    },
  };
}

/**
 * The agent-identity process: reads the workload CA key and cluster CA from the secret store
 * (held in memory only), then serves the Identity contract.
 */
export const identityProcess: AgentProcessDefinition = {
  service: 'identity',
  module: async ({ config, env, logger, client }) => {
    const secrets = openSecretStores(config, env)['aws-parameter-store'];
    let workloadCaKey;
    let clusterCa;
    try {
      workloadCaKey = parseWorkloadCaSecret(
        await secrets.get(systemSecretName(config.cluster, WORKLOAD_CA_KEY_SECRET)),
      );
      clusterCa = parseClusterCaSecret(
        await secrets.get(systemSecretName(config.cluster, CLUSTER_CA_SECRET)),
        config.cluster,
      );
    } catch (err) {
      throw new PodminError(
        err instanceof PodminError ? err.code : 'INTERNAL',
        `reading CA secrets: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err, hint: 'run `podmin setup` to create them' },
      );
    }
    const publish = config.workloadCaPublish ? parseS3Url(config.workloadCaPublish) : undefined;
    const external = publish
      ? new ObjectStoreExternalBundle(openS3Bucket(config, env, publish.bucket), publish)
      : undefined;
    if (external)
      logger.event('info', 'publish workload CA bundle', { location: external.location });
    return IdentityModule.register({
      cluster: config.cluster,
      nodegroup: config.nodegroup,
      nodeRoot: config.nodeRoot,
      nodeAddress: config.nodeAddress,
      nodeId: config.nodeId,
      objects: openBucketStore(config, env),
      workloadCaKey,
      clusterCa,
      clock: systemClock,
      logger,
      leadership: coordinatorLeadership(client('coordinator')),
      ...(external ? { external } : {}),
    });
  },
};
