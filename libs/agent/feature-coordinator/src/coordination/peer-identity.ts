import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { formatIpv6, isDnsLabel, isDnsSubdomain, parseIpv6 } from '@podmin/util-names';
import { clusterTrustDomain, parseCertificate, parseSpiffeId } from '@podmin/util-pki';
import type { CoordinationPeer } from '../coordinator.ports';
import { CoordinationError } from './coordination-error';

/** A peer as its certificate names it, before the connection's remote address is added. */
export type PeerIdentity = Omit<CoordinationPeer, 'remoteAddress'>;

/** What a certificate can be given as: node's peer certificate objects, PEM or DER. */
export type PeerCertificateInput = PeerCertificate | X509Certificate | string | Uint8Array;

/**
 * Authorizes a coordination peer by its certificate: exactly one URI SAN, a node SPIFFE ID
 * `spiffe://<cluster>.podmin.internal/nodegroup/<ng>/node/<id>` of `cluster`, and at least one
 * IPv6 IP SAN (returned canonical). The Common Name is never read. Throws ACCESS_DENIED with a
 * message naming what is wrong.
 */
export function peerIdentity(
  cert: PeerCertificateInput | undefined,
  cluster: string,
): PeerIdentity {
  const refuse = (why: string): never => {
    throw new CoordinationError('ACCESS_DENIED', `authorizing coordination peer: ${why}`, {
      fault: 'user',
    });
  };
  const der = certificateBytes(cert);
  if (der === undefined) return refuse('no client certificate');
  let uris: string[];
  let ips: string[];
  try {
    const info = parseCertificate(der, 'peer certificate');
    uris = info.uris;
    ips = info.ipAddresses;
  } catch {
    return refuse('unreadable certificate');
  }
  if (uris.length !== 1) return refuse(`expected exactly one URI SAN, found ${uris.length}`);
  const uri = uris[0] ?? '';
  const id = parseSpiffeId(uri);
  if (!id) return refuse(`URI SAN ${JSON.stringify(uri)} is not a SPIFFE ID`);
  const trustDomain = clusterTrustDomain(cluster);
  if (id.trustDomain !== trustDomain) {
    return refuse(`SPIFFE ID ${id.uri} is outside trust domain ${trustDomain} (another cluster)`);
  }
  const [kind, nodegroup = '', nodeKind, nodeId = ''] = id.segments;
  if (id.segments.length !== 4 || kind !== 'nodegroup' || nodeKind !== 'node') {
    return refuse(`SPIFFE ID ${id.uri} is not a node ID (…/nodegroup/<ng>/node/<id>)`);
  }
  if (!isDnsLabel(nodegroup))
    return refuse(`SPIFFE ID ${id.uri}: NodeGroup ${JSON.stringify(nodegroup)} is not a DNS label`);
  if (!isDnsSubdomain(nodeId))
    return refuse(`SPIFFE ID ${id.uri}: node ID ${JSON.stringify(nodeId)} is not a DNS subdomain`);
  const addresses = [
    ...new Set(
      ips.flatMap((ip) => {
        const groups = parseIpv6(ip);
        return groups ? [formatIpv6(groups)] : [];
      }),
    ),
  ].sort();
  if (addresses.length === 0) return refuse(`certificate of ${id.uri} carries no IPv6 IP SAN`);
  return { cluster, nodegroup, nodeId, addresses };
}

/** The DER (or PEM) of whatever form the certificate came in; undefined when there is none. */
function certificateBytes(cert: PeerCertificateInput | undefined): string | Uint8Array | undefined {
  if (cert === undefined) return undefined;
  if (typeof cert === 'string') return cert === '' ? undefined : cert;
  if (cert instanceof Uint8Array) return cert.length === 0 ? undefined : cert;
  // tls.PeerCertificate and crypto.X509Certificate both carry the DER as `raw`.
  const raw = (cert as { raw?: Buffer }).raw;
  return raw === undefined || raw.length === 0 ? undefined : raw;
}

/** Canonical IPv6 text of `address` (brackets and an IPv4-mapped form tolerated), else undefined. */
export function canonicalIpv6(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const groups = parseIpv6(bare.replace(/%.*$/, ''));
  return groups ? formatIpv6(groups) : undefined;
}
