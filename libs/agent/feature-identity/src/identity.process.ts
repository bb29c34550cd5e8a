import { openBucketStore, openS3Bucket, openSecretStores } from '@podmin/agent-data-access-node';
import type { AgentProcessDefinition, ProcessEnv } from '@podmin/agent-data-access-runtime';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import { PodminError } from '@podmin/util-errors';
import { systemSecretName } from '@podmin/data-access-secrets';
import { parseClusterCaSecret, parseWorkloadCaSecret, systemClock } from '@podmin/util-pki';
import { objectStoreCaSource } from './adapters/object-store-ca-source';
import { ObjectStoreExternalBundle, parseS3Url } from './adapters/object-store-external-bundle';
import { NoHostLogExporter, SystemdLogExporter } from './adapters/systemd-log-exporter';
import { IdentityModule } from './identity.module';
import type { LeadershipCheck, LogExporter } from './identity.ports';
import type { IdentityTelemetryDeps } from './identity.service';
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
  module: async ({ config, env, logger, lifecycle, client }) => {
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
    const telemetry = telemetryOf(config, env);
    if (telemetry)
      logger.event('info', 'maintain log export', {
        mtls: telemetry.mtls,
        ca: telemetry.ca?.source ?? null,
      });
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
      ...(telemetry ? { telemetry } : {}),
      telemetryProblems: config.otelLogs.problems.map((p) => `${p.field}: ${p.message}`),
      reportHealth: (healthy, detail) => lifecycle.reportHealth(healthy, detail),
    });
  },
};

/**
 * Log export's part of agent-identity (PODMIN_OTEL_LOGS_MTLS, PODMIN_OTEL_LOGS_CA), or undefined
 * when it has none. Fluent Bit is restarted through systemd only on a node whose root is the
 * host's (`/`, a VM): under the local provider or a test's node root the host's units are not
 * this node's, and the restart is skipped.
 */
function telemetryOf(
  config: AgentProcessConfig,
  env: ProcessEnv,
): IdentityTelemetryDeps | undefined {
  const { mtls, ca } = config.otelLogs;
  if (!mtls && ca === undefined) return undefined;
  const exporter: LogExporter =
    config.nodeRoot === '/'
      ? new SystemdLogExporter()
      : new NoHostLogExporter(
          `node root ${config.nodeRoot} is not the host's: its systemd units are not this node's`,
        );
  return {
    mtls,
    exporter,
    ...(ca
      ? {
          ca: {
            source: ca.url,
            fetch: objectStoreCaSource(openS3Bucket(config, env, ca.bucket), ca),
          },
        }
      : {}),
  };
}
