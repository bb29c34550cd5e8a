import { PodminError } from '@podmin/util-errors';
import { parseSecretName } from './secret-names';
import type { SecretProviderName, SecretStore } from './secret-store.port';

/** The stores a node can read Pod secrets from, by provider name. */
export type SecretStoresByProvider = Partial<Record<SecretProviderName, Pick<SecretStore, 'get'>>>;

/** The shape of the agent's SecretSource port: one Pod secret by provider and full name. */
export interface SecretFetcher {
  /** Reads `/<cluster>/<namespace>/<pod>/<key>` from the named provider. */
  fetch(provider: SecretProviderName, name: string): Promise<Buffer>;
}

/**
 * Adapts secret stores to the agent's SecretSource port. Only workload names are served: a Pod
 * annotation can never reach a `/<cluster>/_system/` secret through this adapter.
 */
export function secretSourceFor(stores: SecretStoresByProvider): SecretFetcher {
  return {
    async fetch(provider, name) {
      const parsed = parseSecretName(name);
      if (parsed.kind !== 'workload') {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `fetching ${name}: system secrets are not available to Pods`,
        );
      }
      const store = stores[provider];
      if (store === undefined) {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `fetching ${name}: secrets provider ${provider} is not configured on this node`,
          { hint: `configured providers: ${Object.keys(stores).join(', ') || 'none'}` },
        );
      }
      return store.get(name);
    },
  };
}
