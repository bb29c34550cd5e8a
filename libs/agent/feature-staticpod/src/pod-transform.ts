import { createHash } from 'node:crypto';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { nodePodDns } from '@podmin/util-manifest';
import type { SecretProviderName } from './staticpod.ports';

/** Annotation carrying the revision derived from a deployment's indexed payload paths. */
export const REVISION_ANNOTATION = 'podmin.dev/revision';
/** Annotation carrying the workload certificate fingerprint. */
export const IDENTITY_REVISION_ANNOTATION = 'podmin.dev/identity-revision';
/** Annotation naming a Pod's Service. */
export const SERVICE_ANNOTATION = 'podmin.dev/service';
/** The secret providers, in the order their annotations are read. */
export const SECRET_PROVIDERS: readonly SecretProviderName[] = [
  'aws-parameter-store',
  'aws-secrets-manager',
];
/** Annotation naming the deployment (index key) a static Pod belongs to. */
export const DEPLOYMENT_ANNOTATION = 'podmin.dev/deployment';
/** Annotation naming the Pod payload a static Pod was staged from. */
export const POD_PAYLOAD_ANNOTATION = 'podmin.dev/pod-payload';
/** Annotation naming the Service payload a static Pod was staged with (absent: none). */
export const SERVICE_PAYLOAD_ANNOTATION = 'podmin.dev/service-payload';
/** Identity volume name the CLI adds to every Pod. */
export const IDENTITY_VOLUME = 'podmin-workload-identity';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A Pod object as far as the reconciler reads it. */
export interface PodObject {
  metadata: {
    name: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: {
    containers: ContainerObject[];
    initContainers?: ContainerObject[];
    volumes?: Array<
      { name: string; hostPath?: { path: string; type?: string } } & Record<string, unknown>
    >;
  } & Record<string, unknown>;
}

interface ContainerObject extends Record<string, unknown> {
  name: string;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}

/** The secret keys a Pod declares, per provider. */
export function declaredSecrets(pod: PodObject): Map<SecretProviderName, string[]> {
  const out = new Map<SecretProviderName, string[]>();
  for (const provider of SECRET_PROVIDERS) {
    const value = pod.metadata.annotations?.[`podmin.dev/${provider}`];
    if (value === undefined) continue;
    const keys = value
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '');
    for (const key of keys) {
      if (!SAFE_KEY.test(key) || key === '.' || key === '..') {
        throw new PodminError(
          'INVALID_MANIFEST',
          `reading Pod ${pod.metadata.name}: secret key ${JSON.stringify(key)} in podmin.dev/${provider} is not a safe single path component`,
        );
      }
    }
    if (keys.length > 0) out.set(provider, [...new Set(keys)].sort());
  }
  return out;
}

/** Revision of a deployment: SHA-256 over its indexed Pod and Service payload paths. */
export function deploymentRevision(podKey: string, serviceKey: string | undefined): string {
  return createHash('sha256')
    .update(`${podKey}\n${serviceKey ?? ''}`)
    .digest('hex')
    .slice(0, 32);
}

/** Host directory of one Pod's secret files for a revision and provider. */
export function secretDir(
  workloads: string,
  pod: string,
  revision: string,
  provider: SecretProviderName,
): string {
  return path.join(workloads, pod, 'secrets', revision, provider);
}

/** Inputs of the node-side Pod transformation. */
export interface TransformInput {
  pod: PodObject;
  revision: string;
  /**
   * Where it came from (deployment key and payload keys), stamped on it so an agent restart
   * knows what runs; and its static Pod name when it differs from the Pod's own (a surge Pod).
   */
  origin?: { deployment: string; pod: string; service: string | undefined; staticName: string };
  identityFingerprint: string;
  /** Node root (`/` on a real node); host paths are rewritten beneath it. */
  root: string;
  workloads: string;
  /** The node's IPv6 address, the Pods' DNS server. */
  nodeAddress: string;
  secretProviders: readonly SecretProviderName[];
}

/**
 * Produces the static Pod kubelet runs: revision and identity annotations, the identity
 * volume under the node root, read-only secret volumes per provider, and DNS pointing at
 * the node with the Service search list, to which the Pod's own `dnsConfig.searches` and
 * `dnsConfig.options` are added (util-manifest's `nodePodDns`, the rule `validate` checks).
 */
export function transformPod(input: TransformInput): PodObject {
  const pod = structuredClone(input.pod);
  const name = pod.metadata.name;
  const namespace = pod.metadata.namespace ?? 'default';
  pod.metadata.namespace = namespace;
  pod.metadata.annotations = {
    ...(pod.metadata.annotations ?? {}),
    [REVISION_ANNOTATION]: input.revision,
    [IDENTITY_REVISION_ANNOTATION]: input.identityFingerprint,
    ...(input.origin === undefined
      ? {}
      : {
          [DEPLOYMENT_ANNOTATION]: input.origin.deployment,
          [POD_PAYLOAD_ANNOTATION]: input.origin.pod,
          ...(input.origin.service === undefined
            ? {}
            : { [SERVICE_PAYLOAD_ANNOTATION]: input.origin.service }),
        }),
  };
  // Two static Pods of one deployment (a surge) need two names; identity and secrets stay the
  // Pod's own, so both run as the same workload.
  if (input.origin !== undefined) pod.metadata.name = input.origin.staticName;
  const volumes = (pod.spec.volumes ?? []).map((v) =>
    v.name === IDENTITY_VOLUME
      ? {
          ...v,
          hostPath: { path: path.join(input.workloads, name, 'identity'), type: 'Directory' },
        }
      : v,
  );
  for (const provider of input.secretProviders) {
    volumes.push({
      name: `podmin-${provider}`,
      hostPath: {
        path: secretDir(input.workloads, name, input.revision, provider),
        type: 'Directory',
      },
    });
  }
  pod.spec.volumes = volumes;
  const mount = (c: ContainerObject): ContainerObject => ({
    ...c,
    volumeMounts: [
      ...(c.volumeMounts ?? []),
      ...input.secretProviders.map((provider) => ({
        name: `podmin-${provider}`,
        mountPath: `/var/run/podmin/${provider}`,
        readOnly: true,
      })),
    ],
  });
  pod.spec.containers = pod.spec.containers.map(mount);
  if (pod.spec.initContainers) pod.spec.initContainers = pod.spec.initContainers.map(mount);
  const dns = nodePodDns(pod.spec, namespace, input.nodeAddress);
  pod.spec['dnsPolicy'] = dns.dnsPolicy;
  pod.spec['dnsConfig'] = dns.dnsConfig;
  return pod;
}
