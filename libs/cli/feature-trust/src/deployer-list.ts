import { systemSecretName, type SecretStore } from '@podmin/data-access-secrets';
import { hasCode } from '@podmin/util-errors';
import {
  DEPLOYERS_KEY,
  parseDeployers,
  serializeDeployers,
  type DeployersDoc,
} from '@podmin/util-trust';
import type { TrustListDeps } from './trust.ports';

/** The trust list of a cluster as read, and whether its parameter exists (enforcement on). */
export interface DeployerList {
  /** `/<cluster>/_system/deployers`. */
  name: string;
  /** The deployers; empty when the parameter does not exist. */
  doc: DeployersDoc;
  /** True when the parameter exists: the cluster's nodes run only what these deployers signed. */
  exists: boolean;
}

/** The parameter holding a cluster's trust list: `/<cluster>/_system/deployers`. */
export function deployersSecretName(cluster: string): string {
  return systemSecretName(cluster, DEPLOYERS_KEY);
}

/**
 * Reads a cluster's trust list with one Parameter Store read; NOT_FOUND is an empty list
 * (enforcement off). A list that does not parse is an error naming its fields, never ignored.
 */
export async function readDeployerList(deps: TrustListDeps): Promise<DeployerList> {
  const name = deployersSecretName(deps.cluster);
  const store = await deps.openStore();
  let body: Buffer;
  try {
    body = await store.get(name);
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND'))
      return { name, doc: { version: 1, deployers: [] }, exists: false };
    throw err;
  }
  return { name, doc: parseDeployers(body, name), exists: true };
}

/** Writes the trust list: creates the parameter when it did not exist, replaces it otherwise. */
export async function writeDeployerList(
  store: SecretStore,
  list: DeployerList,
  doc: DeployersDoc,
): Promise<void> {
  const body = Buffer.from(serializeDeployers(doc), 'utf8');
  if (list.exists) await store.update(list.name, body);
  else
    await store.create(list.name, body, {
      description: 'podmin trusted deployers (managed by podmin trust; nodes verify with it)',
    });
}
