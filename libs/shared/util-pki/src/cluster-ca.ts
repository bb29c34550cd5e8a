import { isIPv6 } from 'node:net';
import type { CertificateInfo } from './certificate';
import { canonicalIp, parseCertificate } from './certificate';
import type { Clock } from './clock';
import { DAY_MS, HOUR_MS, floorToSecond } from './clock';
import type { Ed25519KeyPair } from './ed25519';
import {
  generateEd25519KeyPair,
  parseEd25519PrivateKeyPem,
  privateKeyToPkcs8Pem,
  publicKeysEqual,
} from './ed25519';
import { PkiError } from './errors';
import type { IssuedCertificate } from './issue';
import { createSelfSignedCa, issueLeaf } from './issue';
import { assertDnsLabel, assertDnsSubdomain, clusterTrustDomain } from './names';

/** Lifetime of a cluster (coordination) CA: ten years; setup/destroy is its rotation lifecycle. */
export const CLUSTER_CA_LIFETIME_MS = 3650 * DAY_MS;
/** Lifetime of an in-memory node leaf. */
export const NODE_LEAF_LIFETIME_MS = 24 * HOUR_MS;
/** A node leaf is renewed once this little time is left (a third of its lifetime). */
export const NODE_LEAF_RENEW_BEFORE_MS = 8 * HOUR_MS;
/** Version of the cluster CA secret value format. */
export const CLUSTER_CA_SECRET_VERSION = 1;

/** The cluster coordination CA: its certificate and in-memory key pair. */
export interface ClusterCa {
  certificate: CertificateInfo;
  keyPair: Ed25519KeyPair;
}

/** The subject Common Name of a cluster's coordination CA. */
export function clusterCaCommonName(cluster: string): string {
  assertDnsLabel(cluster, 'cluster');
  return `podmin cluster CA ${cluster}`;
}

/**
 * Creates a new self-signed Ed25519 cluster CA valid for ten years from `now` (to the second),
 * its notBefore backdated by `CLOCK_SKEW_MARGIN_MS`.
 */
export async function createClusterCa(
  cluster: string,
  now: Date,
  lifetimeMs: number = CLUSTER_CA_LIFETIME_MS,
): Promise<ClusterCa> {
  const keyPair = generateEd25519KeyPair();
  const issuedAt = floorToSecond(now);
  const certificate = await createSelfSignedCa(
    keyPair,
    clusterCaCommonName(cluster),
    issuedAt,
    new Date(issuedAt.getTime() + lifetimeMs),
  );
  return { certificate, keyPair };
}

/**
 * The secret value stored at `/<cluster>/_system/cluster-ca`: canonical JSON (sorted keys, no
 * whitespace) `{"certificate":"<PEM>","privateKey":"<PKCS#8 PEM>","version":1}`.
 */
export function serializeClusterCaSecret(ca: ClusterCa): string {
  return JSON.stringify({
    certificate: ca.certificate.pem,
    privateKey: privateKeyToPkcs8Pem(ca.keyPair.privateKey),
    version: CLUSTER_CA_SECRET_VERSION,
  });
}

/**
 * Parses the cluster CA secret value strictly: exactly the three members of
 * {@link serializeClusterCaSecret}, a self-signed CA certificate for `cluster` and the Ed25519
 * key it certifies. INVALID_SECRET otherwise (the message never contains the key).
 */
export function parseClusterCaSecret(value: string | Uint8Array, cluster: string): ClusterCa {
  const fail = (why: string, cause?: unknown): never => {
    throw new PkiError('INVALID_SECRET', `reading the cluster CA secret: ${why}`, {
      cause,
      hint: 'the value is written once by `podmin setup`; restore it from a backup rather than editing it',
    });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : Buffer.from(value).toString('utf8'));
  } catch {
    // The cause would quote the secret, so it is dropped on purpose.
    return fail('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return fail('not a JSON object');
  const record = parsed as Record<string, unknown>;
  const keys = Object.keys(record).sort().join(',');
  if (keys !== 'certificate,privateKey,version') {
    return fail('expected exactly the members certificate, privateKey and version');
  }
  if (record['version'] !== CLUSTER_CA_SECRET_VERSION)
    return fail(`version must be ${CLUSTER_CA_SECRET_VERSION}`);
  const { certificate: certPem, privateKey: keyPem } = record;
  if (typeof certPem !== 'string' || typeof keyPem !== 'string')
    return fail('certificate and privateKey must be PEM strings');
  let certificate: CertificateInfo;
  let keyPair: Ed25519KeyPair;
  try {
    certificate = parseCertificate(certPem, 'cluster CA certificate');
    keyPair = parseEd25519PrivateKeyPem(keyPem, 'cluster CA key');
  } catch (err) {
    return fail('certificate or key unreadable', err instanceof PkiError ? err : undefined);
  }
  if (!publicKeysEqual(certificate.publicKey, keyPair.publicKey))
    return fail('the key does not match the certificate');
  if (!certificate.isCa || !certificate.keyUsages.includes('keyCertSign'))
    return fail('the certificate is not a CA');
  if (certificate.commonName !== clusterCaCommonName(cluster)) {
    return fail(`the certificate is for ${certificate.subject}, not cluster ${cluster}`);
  }
  return { certificate, keyPair };
}

/** Who a node leaf names. */
export interface NodeIdentity {
  cluster: string;
  nodegroup: string;
  /** Node ID (e.g. the EC2 instance ID or the local hostname). */
  nodeId: string;
  /** The node's global IPv6 address. */
  ipv6: string;
}

/** A node's SPIFFE ID: `spiffe://<cluster>.podmin.internal/nodegroup/<ng>/node/<node-id>`. */
export function nodeSpiffeId(identity: Omit<NodeIdentity, 'ipv6'>): string {
  assertDnsLabel(identity.nodegroup, 'NodeGroup');
  assertDnsSubdomain(identity.nodeId, 'node ID');
  return `spiffe://${clusterTrustDomain(identity.cluster)}/nodegroup/${identity.nodegroup}/node/${identity.nodeId}`;
}

/**
 * Issues a node leaf from the cluster CA: Ed25519, `lifetimeMs` (24 h) from `now` capped at the
 * CA's expiry, notBefore backdated by `CLOCK_SKEW_MARGIN_MS` (peers whose clocks run behind
 * accept it at once), IP SAN = node IPv6, one SPIFFE URI SAN, EKU serverAuth + clientAuth,
 * CN = node ID (informational only: peers authorize by the URI SAN).
 */
export async function issueNodeLeaf(
  ca: ClusterCa,
  identity: NodeIdentity,
  now: Date,
  lifetimeMs: number = NODE_LEAF_LIFETIME_MS,
): Promise<IssuedCertificate> {
  const uri = nodeSpiffeId(identity);
  if (!isIPv6(identity.ipv6)) {
    throw new PkiError(
      'INVALID_NAME',
      `node IPv6 ${JSON.stringify(identity.ipv6)}: not an IPv6 address`,
    );
  }
  const issuedAt = floorToSecond(now);
  const notAfter = new Date(
    Math.min(issuedAt.getTime() + lifetimeMs, ca.certificate.notAfter.getTime()),
  );
  // Judged at the issue time, not the backdated notBefore: a leaf that would expire on issue is
  // refused, as before backdating.
  if (notAfter <= issuedAt) {
    throw new PkiError(
      'CHAIN_INVALID',
      `issuing a node certificate: the cluster CA expired at ${ca.certificate.notAfter.toISOString()}`,
    );
  }
  return issueLeaf(ca, {
    commonName: identity.nodeId,
    issuedAt,
    notAfter,
    uris: [uri],
    dnsNames: [],
    ipAddresses: [canonicalIp(identity.ipv6)],
    extendedKeyUsages: ['serverAuth', 'clientAuth'],
  });
}

/**
 * Holds a node's current in-memory leaf and replaces it once less than
 * {@link NODE_LEAF_RENEW_BEFORE_MS} remains; concurrent callers share one issuance.
 */
export class NodeLeafSource {
  private current: IssuedCertificate | undefined;
  private pending: Promise<IssuedCertificate> | undefined;

  constructor(
    private readonly ca: ClusterCa,
    private readonly identity: NodeIdentity,
    private readonly clock: Clock,
    private readonly lifetimeMs: number = NODE_LEAF_LIFETIME_MS,
    private readonly renewBeforeMs: number = NODE_LEAF_RENEW_BEFORE_MS,
  ) {}

  /** The current leaf, issuing a new one first when none exists or renewal is due. */
  async leaf(): Promise<IssuedCertificate> {
    const now = this.clock.now();
    if (
      this.current &&
      this.current.certificate.notAfter.getTime() - now.getTime() > this.renewBeforeMs
    ) {
      return this.current;
    }
    this.pending ??= issueNodeLeaf(this.ca, this.identity, now, this.lifetimeMs).finally(() => {
      this.pending = undefined;
    });
    this.current = await this.pending;
    return this.current;
  }
}
