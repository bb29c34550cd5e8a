import { systemSecretName, type SecretStore } from '@podmin/data-access-secrets';
import { PodminError, hasCode } from '@podmin/util-errors';

/** The cluster's long-lived system secrets that setup stores once. */
export interface SetupSecrets {
  /** 32 random bytes: the Ed25519 workload CA seed (stored as padded standard base64). */
  workloadCaKey: Buffer;
  /** The cluster CA secret value (certificate and private key), as util-pki serialises it. */
  clusterCa: string;
}

/** Which system secrets were written now and which already existed and were kept. */
export interface SetupSecretsResult {
  created: string[];
  kept: string[];
}

/**
 * Create-only: writes `/<cluster>/_system/workload-ca-key` (base64 of the 32-byte seed) and
 * `/<cluster>/_system/cluster-ca`. An existing secret is kept unchanged (ALREADY_EXISTS is
 * success), so re-running setup never changes the cluster's trust.
 */
export async function storeSetupSecrets(
  store: SecretStore,
  cluster: string,
  secrets: SetupSecrets,
): Promise<SetupSecretsResult> {
  if (secrets.workloadCaKey.length !== 32) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `storing the workload CA key: it must be 32 bytes, not ${secrets.workloadCaKey.length}`,
    );
  }
  const result: SetupSecretsResult = { created: [], kept: [] };
  const writes: Array<[string, Buffer]> = [
    [
      systemSecretName(cluster, 'workload-ca-key'),
      Buffer.from(secrets.workloadCaKey.toString('base64')),
    ],
    [systemSecretName(cluster, 'cluster-ca'), Buffer.from(secrets.clusterCa, 'utf8')],
  ];
  for (const [name, value] of writes) {
    try {
      await store.create(name, value, { description: 'podmin system secret (managed by setup)' });
      result.created.push(name);
    } catch (err) {
      if (!hasCode(err, 'ALREADY_EXISTS')) throw err;
      result.kept.push(name);
    }
  }
  return result;
}

/**
 * Deletes both system secrets and the trust list (§6.41: a cluster created again under the same
 * name starts without trusted deployers) permanently (`podmin destroy`); an absent one is
 * success. Returns the names that existed and were deleted.
 */
export async function destroySetupSecrets(store: SecretStore, cluster: string): Promise<string[]> {
  const deleted: string[] = [];
  for (const key of ['workload-ca-key', 'cluster-ca', 'deployers']) {
    const name = systemSecretName(cluster, key);
    try {
      await store.destroy(name);
      deleted.push(name);
    } catch (err) {
      if (!hasCode(err, 'NOT_FOUND')) throw err;
    }
  }
  return deleted;
}
