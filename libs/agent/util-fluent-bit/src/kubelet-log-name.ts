/** The directory kubelet keeps one symlink per running container's CRI log in. */
export const CONTAINER_LOG_DIR = '/var/log/containers';

/**
 * kubelet's `/var/log/containers/<pod>_<namespace>_<container>-<container id>.log` name, split
 * into its parts: the Pod name (a DNS subdomain: dots and dashes), the namespace and container
 * (DNS labels) and the 64-hex CRI container ID. One pattern serves Fluent Bit (Onigmo, the
 * content_modifier `extract` action, which turns each named group into a record key) and the
 * golden test (JavaScript): named groups, classes and anchors mean the same in both. Group names
 * have no dots (Onigmo refuses them); the configuration renames them to the OpenTelemetry keys.
 */
export const KUBELET_LOG_NAME_PATTERN =
  '^/var/log/containers/(?<pod>[a-z0-9](?:[-.a-z0-9]*[a-z0-9])?)_(?<namespace>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)_(?<container>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)-(?<container_id>[0-9a-f]{64})\\.log$';

/** The record key each named group of {@link KUBELET_LOG_NAME_PATTERN} becomes. */
export const KUBELET_LOG_NAME_ATTRIBUTES = Object.freeze({
  pod: 'k8s.pod.name',
  namespace: 'k8s.namespace.name',
  container: 'k8s.container.name',
  container_id: 'container.id',
} as const);

/** The per-record container identity of one kubelet log path. */
export type ContainerLogAttributes = {
  -readonly [
    K in keyof typeof KUBELET_LOG_NAME_ATTRIBUTES as (typeof KUBELET_LOG_NAME_ATTRIBUTES)[K]
  ]: string;
};

const KUBELET_LOG_NAME = new RegExp(KUBELET_LOG_NAME_PATTERN);

/**
 * The attributes Fluent Bit derives from `path` with {@link KUBELET_LOG_NAME_PATTERN}, or
 * undefined when kubelet would not have named a file so.
 */
export function containerLogAttributes(path: string): ContainerLogAttributes | undefined {
  const groups = KUBELET_LOG_NAME.exec(path)?.groups;
  if (groups === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [group, key] of Object.entries(KUBELET_LOG_NAME_ATTRIBUTES)) {
    const value = groups[group];
    if (value === undefined) return undefined;
    out[key] = value;
  }
  return out as ContainerLogAttributes;
}
