import { PROTO_FILES } from '@podmin/agent-contracts';
import { serviceSocket, startGrpcService, unaryClient } from '@podmin/agent-data-access-grpc';
import { JsonLogger } from '@podmin/agent-util-logging';
import { openBucketStore, openSecretStores } from '@podmin/agent-data-access-node';
import { secretSourceFor } from '@podmin/data-access-secrets';
import { parseAgentProcessConfig, type AgentProcessConfig } from '@podmin/agent-util-config';
import { StaticPodModule } from './staticpod.module';
import type { IdentityIssuer, IdentityRequest } from './staticpod.ports';

/** Environment of the process (endpoint overrides for emulators, node facts for local). */
type Env = Readonly<Record<string, string | undefined>>;

/** IdentityIssuer over the agent-identity process's gRPC contract. */
function identityClient(config: AgentProcessConfig): IdentityIssuer {
  const client = unaryClient(
    PROTO_FILES.identity,
    'Identity',
    serviceSocket(config.runtimeDir, 'identity'),
  );
  return {
    ensure: (r: IdentityRequest) =>
      client.call<object, { fingerprint: string }>('ensureWorkload', {
        pod: r.pod,
        namespace: r.namespace,
        service: r.service ?? '',
      }),
    remove: async (pod: string) => {
      await client.call('removeWorkload', { pod });
    },
  };
}

/** Starts the agent-staticpod process; exits 2 listing every bad configuration value. */
export async function runStaticPod(argv: readonly string[], env: Env = process.env): Promise<void> {
  const logger = new JsonLogger({ service: 'agent-staticpod' });
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
  const module = StaticPodModule.register({
    config,
    logger,
    store: openBucketStore(config, env),
    secrets: secretSourceFor(openSecretStores(config, env)),
    identity: identityClient(config),
  });
  await startGrpcService({
    module,
    healthName: 'podmin.agent.v1.StaticPod',
    protoFiles: [PROTO_FILES.staticpod],
    socketPath: serviceSocket(config.runtimeDir, 'staticpod'),
    logger,
  });
  logger.event('info', 'serve grpc', { socket: serviceSocket(config.runtimeDir, 'staticpod') });
  process.send?.({ type: 'ready' });
}
