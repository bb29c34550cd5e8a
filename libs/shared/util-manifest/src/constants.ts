import { ROLLOUT_ANNOTATION } from '@podmin/util-rollout';

/** Name of the volume podmin adds to every Pod for its workload identity (tls.crt, tls.key, ca.crt). */
export const WORKLOAD_IDENTITY_VOLUME = 'podmin-workload-identity';

/** Read-only mount path of the workload identity in every regular and init container. */
export const WORKLOAD_IDENTITY_MOUNT_PATH = '/var/run/secrets/podmin.dev/tls';

/** Host directory holding a Pod's current workload identity generation. */
export function workloadIdentityHostPath(podName: string): string {
  return `/run/podmin/workloads/${podName}/identity`;
}

/** Node-selector key naming the NodeGroup a DaemonSet runs on. */
export const NODEGROUP_SELECTOR_KEY = 'podmin.dev/nodegroup';

/** Pod annotation naming the Service that selects the Pod. */
export const SERVICE_ANNOTATION = 'podmin.dev/service';

/** Pod annotation recording which built-in install produced a deployment. */
export const ORIGIN_ANNOTATION = 'podmin.dev/origin';

/** Pod annotation listing AWS Parameter Store keys to mount. */
export const AWS_PARAMETER_STORE_ANNOTATION = 'podmin.dev/aws-parameter-store';

/** Pod annotation listing AWS Secrets Manager keys to mount. */
export const AWS_SECRETS_MANAGER_ANNOTATION = 'podmin.dev/aws-secrets-manager';

/** Volume names the agent injects for secret mounts; user manifests may not use them. */
export const RESERVED_SECRET_VOLUMES: readonly string[] = [
  'podmin-aws-parameter-store',
  'podmin-aws-secrets-manager',
];

/** Container path under which the agent mounts secret and configuration values. */
export const SECRET_MOUNT_ROOT = '/var/run/podmin';

/**
 * Pod annotation keeping, for display, the tag references deploy pinned by digest: a JSON object,
 * container name → the reference before pinning (DESIGN §6, deploy by digest).
 */
export const IMAGE_TAGS_ANNOTATION = 'podmin.dev/image-tags';

/** Annotations set by podmin or its agent that a template may not set itself. */
export const RESERVED_POD_ANNOTATIONS: readonly string[] = [
  SERVICE_ANNOTATION,
  IMAGE_TAGS_ANNOTATION,
  ROLLOUT_ANNOTATION,
  'podmin.dev/revision',
  'podmin.dev/identity-revision',
];

/** Namespace name reserved for podmin's own system secrets. */
export const RESERVED_NAMESPACE = '_system';

/** Origins `podmin list` recognises in the ORIGIN column. */
export const RECOGNIZED_ORIGINS: readonly string[] = ['install/cloudflared'];

/**
 * Largest Pod or Service payload, in bytes. Agents refuse to read a larger one and the CLI
 * refuses to commit one, so both sides use this single bound.
 */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;
