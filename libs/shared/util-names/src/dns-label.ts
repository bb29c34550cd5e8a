// The DNS-1123 label rule (RFC 1123 as Kubernetes applies it), written once for every name the
// CLI and the agent check: clusters, node groups, namespaces, Pods, node IDs, port names.
const LABEL_SHAPE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Longest DNS-1123 label. */
export const DNS_LABEL_MAX_LENGTH = 63;

/** Longest DNS-1123 subdomain. */
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

/**
 * True when `value` is a DNS-1123 label of at most `maxLength` characters: lowercase letters,
 * digits and "-", starting and ending with a letter or digit. Some names are shorter (a cluster
 * at most 40, a port name 15); `Infinity` checks the characters only.
 */
export function isDnsLabel(value: string, maxLength: number = DNS_LABEL_MAX_LENGTH): boolean {
  return value.length <= maxLength && LABEL_SHAPE.test(value);
}

/**
 * True when `value` is a DNS-1123 subdomain: at most 253 characters of dot-separated labels.
 * Kubernetes limits only the whole (the default); `maxLabelLength` 63 also limits each label,
 * as certificates' DNS names require.
 */
export function isDnsSubdomain(
  value: string,
  maxLabelLength: number = DNS_SUBDOMAIN_MAX_LENGTH,
): boolean {
  return (
    value.length <= DNS_SUBDOMAIN_MAX_LENGTH &&
    value.split('.').every((label) => isDnsLabel(label, maxLabelLength))
  );
}
