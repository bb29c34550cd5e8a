import {
  createClusterCa,
  generateWorkloadCaSecretValue,
  serializeClusterCaSecret,
} from '@podmin/util-pki';

/** The one method of a SecretStore that seeding needs (LocalSecretStore, Parameter Store, …). */
export interface SecretCreator {
  create(name: string, value: Buffer): Promise<void>;
}

/**
 * Stores what `podmin setup` stores create-only before any agent starts, the workload CA key
 * (`/<cluster>/_system/workload-ca-key`) and the cluster CA (`/<cluster>/_system/cluster-ca`),
 * then each of `secrets` (full name → value, e.g. `/demo/product/web/db-url`).
 */
export async function seedClusterSecrets(
  store: SecretCreator,
  cluster: string,
  secrets: Readonly<Record<string, string>> = {},
): Promise<void> {
  await store.create(
    `/${cluster}/_system/workload-ca-key`,
    Buffer.from(generateWorkloadCaSecretValue()),
  );
  await store.create(
    `/${cluster}/_system/cluster-ca`,
    Buffer.from(serializeClusterCaSecret(await createClusterCa(cluster, new Date()))),
  );
  for (const [name, value] of Object.entries(secrets)) await store.create(name, Buffer.from(value));
}
