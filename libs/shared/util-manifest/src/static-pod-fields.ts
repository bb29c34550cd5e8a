import type { ProblemSink } from './checks';
import { childPath, isRecord } from './checks';
import {
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  SECRET_MOUNT_ROOT,
  WORKLOAD_IDENTITY_MOUNT_PATH,
} from './constants';
import { CLUSTER_DOMAIN, HONOURED_DNS_POLICIES, clusterSearches } from './pod-dns';

/** One Pod field kubelet cannot honour in a static Pod, why, and what to use instead. */
export interface StaticPodRefusal {
  /**
   * Where the field is, relative to the Pod spec; `[]` stands for every item of a list, and
   * `containers[]` for every regular and init container.
   */
  field: string;
  /** Why a static Pod cannot honour it. */
  why: string;
  /** The podmin way to get the same thing. */
  instead: string;
  /** Refuse only values for which this holds (default: any value). */
  refuses?: (value: unknown) => boolean;
}

const NO_API = 'static Pods cannot refer to API objects (podmin has no API server)';
const IDENTITY = `every Pod already has a podmin workload identity (tls.crt, tls.key and ca.crt) at ${WORKLOAD_IDENTITY_MOUNT_PATH}`;
const PARAMETER_FILE = `store the file with \`podmin secret create <key> --for <pod> --from-file FILE\` (Parameter Store) and list the key in the Pod template annotation ${AWS_PARAMETER_STORE_ANNOTATION}; the agent mounts it read-only at ${SECRET_MOUNT_ROOT}/aws-parameter-store/<key>`;
const SECRET_FILE = `store the value with \`podmin secret create <key> --for <pod>\` and list the key in the Pod template annotation ${AWS_PARAMETER_STORE_ANNOTATION} or ${AWS_SECRETS_MANAGER_ANNOTATION}; the agent mounts it read-only at ${SECRET_MOUNT_ROOT}/<provider>/<key>`;
const SECRET_ENV = `podmin delivers secrets as files, not environment variables: store the value with \`podmin secret create <key> --for <pod>\`, list the key in the Pod template annotation ${AWS_SECRETS_MANAGER_ANNOTATION} (or ${AWS_PARAMETER_STORE_ANNOTATION}) and read ${SECRET_MOUNT_ROOT}/aws-secrets-manager/<key>`;
const CONFIG_ENV = `podmin delivers configuration as files, not environment variables: store the value with \`podmin secret create <key> --for <pod>\` (Parameter Store), list the key in the Pod template annotation ${AWS_PARAMETER_STORE_ANNOTATION} and read ${SECRET_MOUNT_ROOT}/aws-parameter-store/<key>, or set env[].value directly`;
const LOCAL_VOLUME =
  'use a hostPath volume for data that must outlive the Pod, or an emptyDir (with sizeLimit) for scratch space';
const CLUSTER_DNS = `every podmin Pod resolves through the cluster DNS its node sets up (the spec): CoreDNS on the node's address as its only nameserver (it answers Service names under svc.${CLUSTER_DOMAIN} and forwards every other name to the provider's resolver) and the search list ${clusterSearches('<namespace>').join(', ')}`;
const CLUSTER_DNS_KEEPS = `names outside ${CLUSTER_DOMAIN} still reach the provider's resolver through CoreDNS, and dnsConfig.searches (after the cluster's) and dnsConfig.options (ndots, timeout, attempts, ...) are kept`;

/**
 * The Pod fields a static Pod on a podmin node cannot honour (DESIGN §6.23, and §6.26 for DNS),
 * one row each. `validate` and `deploy` refuse them, naming the field, why, and the podmin way;
 * kubelet would otherwise reject or hang such a Pod on every node, or the node would silently
 * replace the value, far from the person who deployed it.
 */
export const STATIC_POD_REFUSALS: readonly StaticPodRefusal[] = [
  {
    field: 'serviceAccountName',
    why: `${NO_API}: a ServiceAccount and its tokens live in the API server`,
    instead: `${IDENTITY}; remove serviceAccountName`,
  },
  {
    field: 'serviceAccount',
    why: `${NO_API}: a ServiceAccount and its tokens live in the API server`,
    instead: `${IDENTITY}; remove serviceAccount`,
  },
  {
    field: 'automountServiceAccountToken',
    why: `${NO_API}: only the API server issues ServiceAccount tokens`,
    instead: `${IDENTITY}; remove automountServiceAccountToken or set it to false`,
    refuses: (value) => value !== false,
  },
  {
    field: 'imagePullSecrets',
    why: `${NO_API}: pull secrets are Secret objects`,
    instead:
      'nodes pull every image from the cluster registry without credentials; run `podmin push <image>`, use the reference it prints, and remove imagePullSecrets',
  },
  {
    field: 'volumes[].configMap',
    why: `${NO_API}: a ConfigMap lives in the API server`,
    instead: `${PARAMETER_FILE}, or build the file into the image`,
  },
  {
    field: 'volumes[].secret',
    why: `${NO_API}: a Secret lives in the API server`,
    instead: SECRET_FILE,
  },
  {
    field: 'volumes[].persistentVolumeClaim',
    why: `${NO_API}: a PersistentVolumeClaim lives in the API server, and podmin nodes provision no volumes`,
    instead: LOCAL_VOLUME,
  },
  {
    field: 'volumes[].ephemeral',
    why: `${NO_API}: an ephemeral volume is a PersistentVolumeClaim created through the API server, and podmin nodes provision no volumes`,
    instead: LOCAL_VOLUME,
  },
  {
    field: 'volumes[].csi',
    why: 'podmin nodes run no CSI drivers',
    instead: LOCAL_VOLUME,
  },
  {
    field: 'volumes[].projected.sources[].serviceAccountToken',
    why: `${NO_API}: only the API server issues ServiceAccount tokens`,
    instead: `${IDENTITY}; remove this projected source`,
  },
  {
    field: 'volumes[].projected.sources[].configMap',
    why: `${NO_API}: a ConfigMap lives in the API server`,
    instead: PARAMETER_FILE,
  },
  {
    field: 'volumes[].projected.sources[].secret',
    why: `${NO_API}: a Secret lives in the API server`,
    instead: SECRET_FILE,
  },
  {
    field: 'volumes[].projected.sources[].clusterTrustBundle',
    why: `${NO_API}: a ClusterTrustBundle lives in the API server`,
    instead: `the workload CA bundle is ${WORKLOAD_IDENTITY_MOUNT_PATH}/ca.crt in every container; remove this projected source`,
  },
  {
    field: 'volumes[].projected.sources[].podCertificate',
    why: `${NO_API}: Pod certificates are issued through the API server`,
    instead: `${IDENTITY}; remove this projected source`,
  },
  {
    field: 'containers[].env[].valueFrom.secretKeyRef',
    why: `${NO_API}: the Secret lives in the API server`,
    instead: SECRET_ENV,
  },
  {
    field: 'containers[].env[].valueFrom.configMapKeyRef',
    why: `${NO_API}: the ConfigMap lives in the API server`,
    instead: CONFIG_ENV,
  },
  {
    field: 'containers[].envFrom[].secretRef',
    why: `${NO_API}: the Secret lives in the API server`,
    instead: SECRET_ENV,
  },
  {
    field: 'containers[].envFrom[].configMapRef',
    why: `${NO_API}: the ConfigMap lives in the API server`,
    instead: CONFIG_ENV,
  },
  {
    field: 'resourceClaims',
    why: `${NO_API}: ResourceClaims are allocated through the API server and its scheduler`,
    instead:
      'podmin has no dynamic resource allocation; remove resourceClaims (a hostPath volume can expose a device file)',
  },
  {
    field: 'containers[].resources.claims',
    why: `${NO_API}: ResourceClaims are allocated through the API server and its scheduler`,
    instead: 'podmin has no dynamic resource allocation; remove resources.claims',
  },
  {
    field: 'dnsPolicy',
    why: `${CLUSTER_DNS}; that is dnsPolicy ClusterFirst (ClusterFirstWithHostNet for a hostNetwork Pod); Default (the node's own resolver) or None (only dnsConfig) would replace it, and Service names would not resolve`,
    instead: `omit dnsPolicy or set ${HONOURED_DNS_POLICIES.join(' or ')}: ${CLUSTER_DNS_KEEPS}`,
    refuses: (value) => typeof value !== 'string' || !HONOURED_DNS_POLICIES.includes(value),
  },
  {
    field: 'dnsConfig.nameservers',
    why: `${CLUSTER_DNS}; another nameserver would bypass it: glibc asks the next one whenever CoreDNS is slow (and in turn with options rotate), musl asks all at once and takes the first answer, and a nameserver outside the cluster answers Service names with NXDOMAIN`,
    instead: `remove dnsConfig.nameservers: ${CLUSTER_DNS_KEEPS}`,
    // An empty list adds nothing, as in Kubernetes.
    refuses: (value) => !(Array.isArray(value) && value.length === 0),
  },
  {
    field: 'readinessGates',
    why: `${NO_API}: controllers set readiness gate conditions through the API server, so the Pod would never be Ready`,
    instead: 'use a readinessProbe, which kubelet evaluates on the node',
  },
];

/** The concrete paths (under `base`) where `segments` lead to a present value. */
function matches(
  value: unknown,
  segments: readonly string[],
  base: string,
  refuses: (value: unknown) => boolean,
): string[] {
  const [head, ...rest] = segments;
  if (head === undefined) return refuses(value) ? [base] : [];
  if (!isRecord(value)) return [];
  const list = head.endsWith('[]');
  const key = list ? head.slice(0, -2) : head;
  // `containers[]` stands for both kinds of container, as kubelet runs both.
  const keys = list && key === 'containers' ? ['containers', 'initContainers'] : [key];
  const out: string[] = [];
  for (const name of keys) {
    if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
    const child = value[name];
    const path = childPath(base, name);
    if (!list) {
      out.push(...matches(child, rest, path, refuses));
    } else if (Array.isArray(child)) {
      child.forEach((item: unknown, index) => {
        out.push(...matches(item, rest, `${path}[${index}]`, refuses));
      });
    }
  }
  return out;
}

/**
 * Refuses each field of {@link STATIC_POD_REFUSALS} present in `spec` (a Pod spec at
 * `specPath`), naming the concrete field, why, and the podmin way.
 */
export function checkStaticPodFields(
  spec: Record<string, unknown>,
  specPath: string,
  sink: ProblemSink,
): void {
  for (const row of STATIC_POD_REFUSALS) {
    const segments = row.field.split('.');
    for (const path of matches(spec, segments, specPath, row.refuses ?? (() => true))) {
      sink.add(path, `cannot be used: ${row.why}; instead, ${row.instead}`);
    }
  }
}
