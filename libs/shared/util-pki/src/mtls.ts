import type { X509Certificate } from 'node:crypto';
import type { ConnectionOptions, PeerCertificate, TLSSocket, TlsOptions } from 'node:tls';
import { parseCertificate } from './certificate';
import { PkiError } from './errors';
import type { SpiffeId } from './names';
import { clusterTrustDomain, parseSpiffeId } from './names';

/** Certificate, key and trust anchors of one side of a mutual-TLS connection. */
export interface MutualTlsMaterial {
  /** Our certificate (PEM). */
  certificatePem: string;
  /** Our private key (PKCS#8 PEM). */
  privateKeyPem: string;
  /** The only CA certificates trusted for the peer (PEM bundle); replaces the system roots. */
  caPem: string;
}

/** What a peer's SPIFFE ID must satisfy. */
export interface SpiffePeerPolicy {
  /** The cluster whose trust domain (`<cluster>.podmin.internal`) the peer must belong to. */
  cluster: string;
  /** Optional further check of the path segments, e.g. only `nodegroup/*\/node/*`. */
  allowPath?: (segments: readonly string[]) => boolean;
}

/** Accepts exactly the node path `nodegroup/<ng>/node/<node-id>`. */
export function isNodePath(segments: readonly string[]): boolean {
  return segments.length === 4 && segments[0] === 'nodegroup' && segments[2] === 'node';
}

/**
 * Authorizes a peer by its SPIFFE URI SAN: exactly one URI SAN, a valid SPIFFE ID in the
 * cluster's trust domain, and an allowed path. The Common Name is ignored: it is not
 * authorization. Throws PEER_REJECTED; returns the ID.
 */
export function checkSpiffePeer(
  peer: PeerCertificate | X509Certificate | Uint8Array | string | undefined,
  policy: SpiffePeerPolicy,
): SpiffeId {
  const reject = (why: string): never => {
    throw new PkiError('PEER_REJECTED', `authorizing TLS peer: ${why}`);
  };
  if (peer === undefined) return reject('no peer certificate');
  const der =
    typeof peer === 'string' || peer instanceof Uint8Array ? peer : (peer as { raw: Buffer }).raw;
  if (der === undefined || (typeof der !== 'string' && der.length === 0))
    return reject('no peer certificate');
  let uris: string[];
  try {
    uris = parseCertificate(der, 'peer certificate').uris;
  } catch {
    return reject('unreadable peer certificate');
  }
  if (uris.length !== 1) return reject(`expected one URI SAN, found ${uris.length}`);
  const id = parseSpiffeId(uris[0] ?? '');
  if (!id) return reject(`URI SAN ${JSON.stringify(uris[0])} is not a SPIFFE ID`);
  const trustDomain = clusterTrustDomain(policy.cluster);
  if (id.trustDomain !== trustDomain) {
    return reject(`SPIFFE ID ${id.uri} is outside trust domain ${trustDomain}`);
  }
  if (policy.allowPath && !policy.allowPath(id.segments))
    return reject(`SPIFFE ID ${id.uri} is not allowed here`);
  return id;
}

const TLS13_ONLY = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' } as const;

/**
 * Node `tls.createServer` options for TLS 1.3-only mutual authentication: the client must
 * present a certificate chaining to `caPem`. Node checks the chain; call
 * {@link verifyTlsPeer} on each `secureConnection` to authorize the SPIFFE ID.
 */
export function mutualTlsServerOptions(material: MutualTlsMaterial): TlsOptions {
  return {
    ...TLS13_ONLY,
    cert: material.certificatePem,
    key: material.privateKeyPem,
    ca: material.caPem,
    requestCert: true,
    rejectUnauthorized: true,
  };
}

/**
 * Node `tls.connect` options for TLS 1.3-only mutual authentication: presents our leaf, trusts
 * only `caPem`, and replaces hostname checking with the SPIFFE peer check (nodes are dialled
 * by IP and authorized by URI SAN).
 */
export function mutualTlsClientOptions(
  material: MutualTlsMaterial,
  policy: SpiffePeerPolicy,
): ConnectionOptions {
  return {
    ...TLS13_ONLY,
    cert: material.certificatePem,
    key: material.privateKeyPem,
    ca: material.caPem,
    rejectUnauthorized: true,
    checkServerIdentity: (_host, cert) => {
      try {
        checkSpiffePeer(cert, policy);
        return undefined;
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    },
  };
}

/**
 * Authorizes the peer of an established server-side socket; on rejection destroys the socket
 * and throws PEER_REJECTED.
 */
export function verifyTlsPeer(socket: TLSSocket, policy: SpiffePeerPolicy): SpiffeId {
  try {
    if (!socket.authorized) {
      throw new PkiError(
        'PEER_REJECTED',
        `authorizing TLS peer: ${String(socket.authorizationError)}`,
      );
    }
    return checkSpiffePeer(socket.getPeerX509Certificate(), policy);
  } catch (err) {
    socket.destroy();
    throw err;
  }
}
