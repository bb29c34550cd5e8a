import { PROTO_FILES } from '@podmin/agent-contracts';
import { serviceSocket, startGrpcService, unaryClient } from '@podmin/agent-data-access-grpc';
import { JsonLogger } from '@podmin/agent-util-logging';
import {
  createS3Client,
  LocalDirectoryObjectStore,
  S3ObjectStore,
} from '@podmin/data-access-object-store';
import {
  createSecretsManagerClient,
  createSsmClient,
  LocalSecretStore,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
  secretSourceFor,
} from '@podmin/data-access-secrets';
import { parseStaticPodConfig, type StaticPodConfig } from './staticpod.config';
import { StaticPodModule } from './staticpod.module';
import type {
  DesiredStateReader,
  IdentityIssuer,
  IdentityRequest,
  SecretSource,
} from './staticpod.ports';

/** Environment of the process (endpoint overrides for emulators, node facts for local). */
type Env = Readonly<Record<string, string | undefined>>;

function openStore(config: StaticPodConfig, env: Env): DesiredStateReader {
  if (config.provider === 'local') return new LocalDirectoryObjectStore(config.bucket);
  const endpoint = env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  return new S3ObjectStore({
    client: createS3Client({ region: config.region, ...(endpoint ? { endpoint } : {}) }),
    bucket: config.bucket,
  });
}

function openSecrets(config: StaticPodConfig, env: Env): SecretSource {
  if (config.provider === 'local') {
    const file = config.localSecretsFile as string;
    return secretSourceFor({
      'aws-parameter-store': new LocalSecretStore({ file, provider: 'aws-parameter-store' }),
      'aws-secrets-manager': new LocalSecretStore({ file, provider: 'aws-secrets-manager' }),
    });
  }
  const ssmEndpoint = env['AWS_ENDPOINT_URL_SSM'] ?? env['AWS_ENDPOINT_URL'];
  const smEndpoint = env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ?? env['AWS_ENDPOINT_URL'];
  return secretSourceFor({
    'aws-parameter-store': new ParameterStoreSecretStore(
      createSsmClient({ region: config.region, ...(ssmEndpoint ? { endpoint: ssmEndpoint } : {}) }),
    ),
    'aws-secrets-manager': new SecretsManagerSecretStore(
      createSecretsManagerClient({
        region: config.region,
        ...(smEndpoint ? { endpoint: smEndpoint } : {}),
      }),
    ),
  });
}

/** IdentityIssuer over the agent-identity process's gRPC contract. */
function identityClient(config: StaticPodConfig): IdentityIssuer {
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
  let config: StaticPodConfig;
  try {
    config = parseStaticPodConfig(argv, env);
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
    store: openStore(config, env),
    secrets: openSecrets(config, env),
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
