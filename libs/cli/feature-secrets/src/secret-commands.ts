import {
  PROVIDER_RULES,
  SECRET_PROVIDERS,
  SYSTEM_SEGMENT,
  parseSecretName,
  workloadSecretName,
  type SecretProviderName,
} from '@podmin/data-access-secrets';
import { PodminError } from '@podmin/util-errors';
import { assertOtelHeaders } from './otel-headers';
import {
  USER_SYSTEM_KEYS,
  resolveProvider,
  resolveSecretTarget,
  type SecretAddress,
  type SecretTarget,
} from './secret-target';
import { readSecretValue, type ValueSource } from './secret-value';
import type { SecretsDeps } from './secrets.ports';

/** Flags of `podmin secret create|update`. */
export type WriteSecretOptions = SecretAddress & ValueSource;

/** Flags of `podmin secret destroy`. */
export type DestroySecretOptions = SecretAddress & {
  /** `-y/--yes`: destroy without asking. */
  yes?: boolean;
};

/** Flags of `podmin secret list`. */
export interface ListSecretsOptions {
  namespace?: string;
  /** `--for POD`. */
  pod?: string;
  /** `-A`: every namespace. */
  allNamespaces?: boolean;
  /** `--system`: the user-manageable system keys instead of workload secrets. */
  system?: boolean;
  /** Restrict to one provider; both by default. */
  provider?: string;
}

/** One row of `podmin secret list`; never a value. */
export interface SecretListing {
  namespace: string;
  pod: string;
  key: string;
  provider: SecretProviderName;
}

async function readValue(target: SecretTarget, options: ValueSource, deps: SecretsDeps) {
  const value = await readSecretValue(options, deps.input, target.label);
  if (target.system) assertOtelHeaders(value);
  return value;
}

/** `podmin secret create`: stores a new secret; ALREADY_EXISTS when the name is taken. */
export async function createSecret(options: WriteSecretOptions, deps: SecretsDeps): Promise<void> {
  const target = resolveSecretTarget(options, deps.context);
  const value = await readValue(target, options, deps);
  const store = await deps.openStore(target.provider);
  await store.create(target.name, value);
  deps.reporter.info(`Created ${target.label} in ${target.provider} (${value.length} bytes)`);
}

/** `podmin secret update`: replaces the value of an existing secret. */
export async function updateSecret(options: WriteSecretOptions, deps: SecretsDeps): Promise<void> {
  const target = resolveSecretTarget(options, deps.context);
  const value = await readValue(target, options, deps);
  const store = await deps.openStore(target.provider);
  await store.update(target.name, value);
  deps.reporter.info(`Updated ${target.label} in ${target.provider} (${value.length} bytes)`);
}

/** `podmin secret delete`: schedules deletion where the provider has a recovery window. */
export async function deleteSecret(options: SecretAddress, deps: SecretsDeps): Promise<void> {
  const target = resolveSecretTarget(options, deps.context);
  const store = await deps.openStore(target.provider);
  await store.delete(target.name);
  const days = PROVIDER_RULES[target.provider].recoveryWindowDays ?? 0;
  deps.reporter.info(
    `Scheduled deletion of ${target.label} in ${target.provider}; it is gone for good in ${days} days unless restored with \`podmin secret restore\``,
  );
}

/** `podmin secret restore`: cancels a scheduled deletion. */
export async function restoreSecret(options: SecretAddress, deps: SecretsDeps): Promise<void> {
  const target = resolveSecretTarget(options, deps.context);
  const store = await deps.openStore(target.provider);
  await store.restore(target.name);
  deps.reporter.info(`Restored ${target.label} in ${target.provider}`);
}

/** `podmin secret destroy`: deletes permanently after confirmation (or `yes`). */
export async function destroySecret(
  options: DestroySecretOptions,
  deps: SecretsDeps,
): Promise<void> {
  const target = resolveSecretTarget(options, deps.context);
  const doing = `destroying ${target.label} in ${target.provider}`;
  if (!options.yes) {
    if (!deps.input.interactive) {
      throw new PodminError('INVALID_ARGUMENT', `${doing}: confirmation required`, {
        hint: 'pass -y (--yes) to destroy without a prompt',
      });
    }
    const confirmed = await deps.reporter.confirm(
      `Permanently destroy ${target.label} in ${target.provider}? This cannot be undone.`,
    );
    if (!confirmed) {
      throw new PodminError('INVALID_ARGUMENT', `${doing}: not confirmed; nothing was destroyed`);
    }
  }
  const store = await deps.openStore(target.provider);
  await store.destroy(target.name);
  deps.reporter.info(`Destroyed ${target.label} in ${target.provider}`);
}

/**
 * `podmin secret list`: names only, from both providers unless one is chosen. Internal system
 * keys never appear; the allowlisted system keys only with `system`.
 */
export async function listSecrets(
  options: ListSecretsOptions,
  deps: SecretsDeps,
): Promise<SecretListing[]> {
  const { cluster } = deps.context;
  if (
    options.system &&
    (options.pod !== undefined || options.namespace !== undefined || options.allNamespaces)
  ) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      '--system lists /<cluster>/_system/ keys: it cannot be combined with --for, --namespace or -A',
    );
  }
  if (options.allNamespaces && (options.namespace !== undefined || options.pod !== undefined)) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      '-A lists every namespace: omit --namespace and --for',
    );
  }
  const prefix = listingPrefix(cluster, options);
  const providers =
    options.provider === undefined
      ? [...SECRET_PROVIDERS]
      : [resolveProvider(deps.context, options.provider)];
  const rows: SecretListing[] = [];
  const failures: unknown[] = [];
  for (const provider of providers) {
    try {
      const store = await deps.openStore(provider);
      for (const name of await store.list(prefix)) {
        const row = toListing(name, provider, options.system === true);
        if (row !== undefined) rows.push(row);
      }
    } catch (err) {
      if (providers.length === 1) throw err;
      failures.push(err);
      deps.reporter.warn(
        `listing ${provider}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  if (failures.length === providers.length) throw failures[0];
  return rows.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      a.pod.localeCompare(b.pod) ||
      a.key.localeCompare(b.key) ||
      a.provider.localeCompare(b.provider),
  );
}

function listingPrefix(cluster: string, options: ListSecretsOptions): string {
  if (options.system) return `/${cluster}/${SYSTEM_SEGMENT}/`;
  if (options.allNamespaces) return `/${cluster}/`;
  const namespace = options.namespace ?? 'default';
  if (options.pod === undefined) {
    // Validates the namespace with the same rules as a full name.
    const name = workloadSecretName({ cluster, namespace, pod: 'x', key: 'x' });
    return name.slice(0, -'x/x'.length);
  }
  const name = workloadSecretName({ cluster, namespace, pod: options.pod, key: 'x' });
  return name.slice(0, -'x'.length);
}

function toListing(
  name: string,
  provider: SecretProviderName,
  system: boolean,
): SecretListing | undefined {
  let parsed;
  try {
    parsed = parseSecretName(name);
  } catch {
    // Something else stored under the cluster's path; not a podmin secret.
    return undefined;
  }
  if (parsed.kind === 'system') {
    return system && USER_SYSTEM_KEYS.includes(parsed.key)
      ? { namespace: '-', pod: '-', key: parsed.key, provider }
      : undefined;
  }
  return system
    ? undefined
    : { namespace: parsed.namespace, pod: parsed.pod, key: parsed.key, provider };
}
