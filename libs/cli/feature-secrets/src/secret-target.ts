import type { ClusterContext } from '@podmin/cli-util-config';
import {
  OTEL_LOGS_HEADERS_KEY,
  SECRET_PROVIDERS,
  isSecretProviderName,
  systemSecretName,
  workloadSecretName,
  type SecretProviderName,
} from '@podmin/data-access-secrets';
import { PodminError } from '@podmin/util-errors';

/** The one system key operators may manage with `--system` (the spec's allowlist). */
export const USER_SYSTEM_KEYS: readonly string[] = Object.freeze([OTEL_LOGS_HEADERS_KEY]);

/**
 * System keys written by setup (the CAs) or `podmin trust` (the trusted deployers) and read by
 * agents; never reachable through `podmin secret`.
 */
export const INTERNAL_SYSTEM_KEYS: readonly string[] = Object.freeze([
  'workload-ca-key',
  'cluster-ca',
  'deployers',
]);

/** How a secret command names its secret. */
export interface SecretAddress {
  key: string;
  /** `--for`: the Pod the secret is for. */
  pod?: string;
  /** `--namespace/-n`, default "default". */
  namespace?: string;
  /** `--system`: address `/<cluster>/_system/<key>`. */
  system?: boolean;
  /** `--provider`, overriding the context's default secrets provider. */
  provider?: string;
}

/** A resolved secret: full name, provider, and how to describe it without its value. */
export interface SecretTarget {
  name: string;
  provider: SecretProviderName;
  /** e.g. `database-url for pod web in namespace default` or `system secret otel-logs-headers`. */
  label: string;
  system: boolean;
}

/**
 * The provider a context uses when `--provider` is absent. A local context's default `local`
 * means the local file store, which serves both names; Parameter Store is the spec's default.
 */
export function defaultSecretProvider(context: ClusterContext): SecretProviderName {
  return context.secretsProvider === 'local' ? 'aws-parameter-store' : context.secretsProvider;
}

/** Resolves `--provider` against the context; INVALID_ARGUMENT for an unknown name. */
export function resolveProvider(context: ClusterContext, provider?: string): SecretProviderName {
  if (provider === undefined) return defaultSecretProvider(context);
  if (!isSecretProviderName(provider)) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `--provider ${JSON.stringify(provider)}: must be one of ${SECRET_PROVIDERS.join(', ')}`,
      {
        hint:
          context.secretsProvider === 'local'
            ? 'a local cluster serves both names from its local secrets file'
            : undefined,
      },
    );
  }
  return provider;
}

/** Rejects every system key except the allowlisted ones, without revealing anything stored. */
export function assertUserSystemKey(key: string): void {
  if (USER_SYSTEM_KEYS.includes(key)) return;
  const internal = INTERNAL_SYSTEM_KEYS.includes(key);
  throw new PodminError(
    'INVALID_ARGUMENT',
    internal
      ? `--system ${key}: this is an internal system secret managed by ${key === 'deployers' ? 'podmin trust' : 'podmin setup'} and cannot be accessed with podmin secret`
      : `--system ${JSON.stringify(key)}: not a user-manageable system key`,
    { hint: `the only system key podmin secret accepts is ${USER_SYSTEM_KEYS.join(', ')}` },
  );
}

/** Resolves flags into a full secret name and provider, validating every component. */
export function resolveSecretTarget(address: SecretAddress, context: ClusterContext): SecretTarget {
  if (address.system) {
    if (address.pod !== undefined || address.namespace !== undefined) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        '--system addresses /<cluster>/_system/<key>: it cannot be combined with --for or --namespace',
      );
    }
    assertUserSystemKey(address.key);
    const provider = defaultSecretProvider(context);
    if (address.provider !== undefined && resolveProvider(context, address.provider) !== provider) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `--system ${address.key}: system secrets live in the context's default secrets provider (${provider}), where nodes read them`,
        { hint: 'omit --provider, or reconnect with `podmin connect --secrets-provider …`' },
      );
    }
    return {
      name: systemSecretName(context.cluster, address.key),
      provider,
      label: `system secret ${address.key}`,
      system: true,
    };
  }
  if (address.pod === undefined) {
    throw new PodminError('INVALID_ARGUMENT', `secret ${address.key}: --for POD is required`, {
      hint: 'name the Pod the secret is for with --for (and --namespace/-n), or use --system',
    });
  }
  const namespace = address.namespace ?? 'default';
  return {
    name: workloadSecretName({
      cluster: context.cluster,
      namespace,
      pod: address.pod,
      key: address.key,
    }),
    provider: resolveProvider(context, address.provider),
    label: `${address.key} for pod ${address.pod} in namespace ${namespace}`,
    system: false,
  };
}
