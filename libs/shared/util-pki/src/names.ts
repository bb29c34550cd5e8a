import { PkiError } from './errors';

import { DNS_LABEL_MAX_LENGTH, isDnsLabel, isDnsSubdomain } from '@podmin/util-names';

/** Suffix of every cluster's SPIFFE trust domain: `<cluster>.podmin.internal`. */
export const TRUST_DOMAIN_SUFFIX = 'podmin.internal';

/** Throws INVALID_NAME unless `value` is a lowercase RFC 1123 label (cluster, namespace, Service, NodeGroup). */
export function assertDnsLabel(value: string, what: string): void {
  if (!isDnsLabel(value)) {
    throw new PkiError(
      'INVALID_NAME',
      `${what} ${JSON.stringify(value)}: must be a lowercase RFC 1123 label (a-z, 0-9, '-', at most 63 characters)`,
    );
  }
}

/** Throws INVALID_NAME unless `value` is a lowercase RFC 1123 subdomain of at most 253 characters (Pod name, node ID). */
export function assertDnsSubdomain(value: string, what: string): void {
  if (!isDnsSubdomain(value, DNS_LABEL_MAX_LENGTH)) {
    throw new PkiError(
      'INVALID_NAME',
      `${what} ${JSON.stringify(value)}: must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.', at most 253 characters)`,
    );
  }
}

/** The SPIFFE trust domain of a cluster: `<cluster>.podmin.internal`. */
export function clusterTrustDomain(cluster: string): string {
  assertDnsLabel(cluster, 'cluster');
  return `${cluster}.${TRUST_DOMAIN_SUFFIX}`;
}

/** A parsed SPIFFE ID: its trust domain and its path segments. */
export interface SpiffeId {
  trustDomain: string;
  /** Path segments after the trust domain, e.g. `['ns', 'default', 'pod', 'web']`. */
  segments: string[];
  /** The ID as a URI string. */
  uri: string;
}

/**
 * Parses a SPIFFE ID strictly (SPIFFE-ID specification §2): scheme `spiffe`, a lowercase trust
 * domain without port or user info, a non-empty path of non-empty segments without `.`/`..`,
 * no query or fragment, no percent-encoding. Returns undefined for anything else.
 */
export function parseSpiffeId(uri: string): SpiffeId | undefined {
  const match = /^spiffe:\/\/([a-z0-9._-]+)((?:\/[A-Za-z0-9._-]+)+)$/.exec(uri);
  if (!match) return undefined;
  const [, trustDomain = '', path = ''] = match;
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '.' || s === '..')) return undefined;
  return { trustDomain, segments, uri };
}
