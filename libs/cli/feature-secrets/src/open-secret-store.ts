import path from 'node:path';
import type { CliEnvironment, ClusterContext } from '@podmin/cli-util-config';
import {
  LocalSecretStore,
  ParameterStoreSecretStore,
  SecretsManagerSecretStore,
  createSecretsManagerClient,
  createSsmClient,
  type SecretProviderName,
  type SecretStore,
} from '@podmin/data-access-secrets';
import type { SecretStoreOpener } from './secrets.ports';

/** The local provider's secrets file of a cluster: `<data dir>/secrets/<cluster>.json`. */
export function localSecretsFile(dataDir: string, cluster: string): string {
  return path.join(dataDir, 'secrets', `${cluster}.json`);
}

/** The local provider's secret stores: its one file store serves both provider names. */
export function localSecretStoreOpener(
  context: ClusterContext,
  dataDir: string,
): SecretStoreOpener {
  return (provider: SecretProviderName): Promise<SecretStore> =>
    Promise.resolve(
      new LocalSecretStore({ file: localSecretsFile(dataDir, context.cluster), provider }),
    );
}

/**
 * The aws provider's secret stores: the SSM or Secrets Manager adapter with the context's
 * region and profile and any endpoint override from the environment.
 */
export function awsSecretStoreOpener(
  context: ClusterContext,
  env: CliEnvironment,
): SecretStoreOpener {
  return (provider: SecretProviderName): Promise<SecretStore> => {
    const base = {
      region: context.region,
      ...(context.profile === undefined ? {} : { profile: context.profile }),
    };
    if (provider === 'aws-parameter-store') {
      const endpoint = env.ssmEndpoint;
      return Promise.resolve(
        new ParameterStoreSecretStore(
          createSsmClient({ ...base, ...(endpoint === undefined ? {} : { endpoint }) }),
        ),
      );
    }
    const endpoint = env.secretsManagerEndpoint;
    return Promise.resolve(
      new SecretsManagerSecretStore(
        createSecretsManagerClient({ ...base, ...(endpoint === undefined ? {} : { endpoint }) }),
      ),
    );
  };
}
