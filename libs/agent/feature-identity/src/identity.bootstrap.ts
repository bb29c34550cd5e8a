import { PROTO_FILES } from '@podmin/agent-contracts';
import { serviceSocket, startGrpcService } from '@podmin/agent-data-access-grpc';
import { openBucketStore, openS3Bucket, openSecretStores } from '@podmin/agent-data-access-node';
import { parseAgentProcessConfig, type AgentProcessConfig } from '@podmin/agent-util-config';
import { JsonLogger } from '@podmin/agent-util-logging';
import { systemSecretName } from '@podmin/data-access-secrets';
import { parseClusterCaSecret, parseWorkloadCaSecret, systemClock } from '@podmin/util-pki';
import { ObjectStoreExternalBundle, parseS3Url } from './adapters/object-store-external-bundle';
import { IdentityModule } from './identity.process';

/** Secret-store names of the two CA secrets `podmin setup` stores create-only. */
export const WORKLOAD_CA_KEY_SECRET = 'workload-ca-key';
/** Secret-store key of the cluster coordination CA. */
export const CLUSTER_CA_SECRET = 'cluster-ca';

/**
 * Starts the agent-identity process: reads the workload CA key and cluster CA from the secret
 * store (held in memory only), then serves the Identity contract on its Unix socket.
 */
export async function runIdentity(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<void> {
  const logger = new JsonLogger({ service: 'agent-identity' });
  let config: AgentProcessConfig;
  try {
    config = parseAgentProcessConfig(argv, env);
  } catch (err) {
    logger.event('error', 'validate configuration', {
      error: err instanceof Error ? err.message : String(err),
    });
    process.exitCode = 2;
    return;
  }
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
    logger.event('error', 'read CA secrets', {
      error: err instanceof Error ? err.message : String(err),
      hint: 'run `podmin setup` to create them',
    });
    process.exitCode = 1;
    return;
  }
  const publish = config.workloadCaPublish ? parseS3Url(config.workloadCaPublish) : undefined;
  const external = publish
    ? new ObjectStoreExternalBundle(openS3Bucket(config, env, publish.bucket), publish)
    : undefined;
  if (external) logger.event('info', 'publish workload CA bundle', { location: external.location });
  const socketPath = serviceSocket(config.runtimeDir, 'identity');
  await startGrpcService({
    module: IdentityModule.register({
      cluster: config.cluster,
      nodegroup: config.nodegroup,
      nodeRoot: config.nodeRoot,
      nodeAddress: config.nodeAddress,
      objects: openBucketStore(config, env),
      workloadCaKey,
      clusterCa,
      clock: systemClock,
      logger,
      leader: true,
      ...(external ? { external } : {}),
    }),
    healthName: 'podmin.agent.v1.Identity',
    protoFiles: [PROTO_FILES.identity],
    socketPath,
    logger,
  });
  logger.event('info', 'serve grpc', { socket: socketPath });
  process.send?.({ type: 'ready' });
}
