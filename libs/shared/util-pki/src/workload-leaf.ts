import type { CertificateInfo } from './certificate';
import { parseCertificate, verifyIssuedBy } from './certificate';
import { HOUR_MS, floorToSecond } from './clock';
import { parseEd25519PrivateKeyPem, publicKeysEqual } from './ed25519';
import { PkiError } from './errors';
import type { IssuedCertificate } from './issue';
import { issueLeaf } from './issue';
import { assertDnsLabel, assertDnsSubdomain, clusterTrustDomain } from './names';
import type { WorkloadCaKey } from './workload-ca';

/** Lifetime of a workload leaf certificate. */
export const WORKLOAD_LEAF_LIFETIME_MS = 24 * HOUR_MS;
/** A workload leaf is renewed once it has this little time left. */
export const WORKLOAD_LEAF_RENEW_BEFORE_MS = 6 * HOUR_MS;
/** Pod annotation naming the Service a Pod serves. */
export const SERVICE_ANNOTATION = 'podmin.dev/service';
/** Pod annotation carrying the current leaf's SHA-256 fingerprint. */
export const IDENTITY_REVISION_ANNOTATION = 'podmin.dev/identity-revision';

/** Who a workload leaf names. */
export interface WorkloadIdentity {
  cluster: string;
  namespace: string;
  /** Pod name: the subject Common Name. */
  pod: string;
  /** Service from `podmin.dev/service`, when the Pod carries it. */
  service?: string | undefined;
}

/** Validates the names of a workload identity; INVALID_NAME names the bad one. */
export function assertWorkloadIdentity(identity: WorkloadIdentity): void {
  assertDnsLabel(identity.cluster, 'cluster');
  assertDnsLabel(identity.namespace, 'namespace');
  assertDnsSubdomain(identity.pod, 'Pod name');
  if (identity.service !== undefined) assertDnsLabel(identity.service, 'Service');
}

/** The workload's SPIFFE ID: `spiffe://<cluster>.podmin.internal/ns/<namespace>/pod/<pod>`. */
export function workloadSpiffeId(identity: WorkloadIdentity): string {
  assertWorkloadIdentity(identity);
  return `spiffe://${clusterTrustDomain(identity.cluster)}/ns/${identity.namespace}/pod/${identity.pod}`;
}

/**
 * The Service DNS SANs of a workload. The bare Service name is deliberately absent: it is
 * relative to the client's namespace and could identify a different Service.
 */
export function serviceDnsNames(namespace: string, service: string): string[] {
  assertDnsLabel(namespace, 'namespace');
  assertDnsLabel(service, 'Service');
  return [
    `${service}.${namespace}.svc.cluster.local`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}`,
  ];
}

/** The workload CA certificate that signs leaves and its in-memory key. */
export interface WorkloadIssuer {
  certificate: CertificateInfo;
  key: WorkloadCaKey;
}

/**
 * The validity of a leaf the workload CA issues at `now`: from `now` to the second, for 24 h but
 * never past the CA's own expiry. Judged at the issue time, not the backdated notBefore: a leaf
 * that would expire on issue is refused, `doing` naming it.
 */
export function workloadLeafWindow(
  issuer: WorkloadIssuer,
  now: Date,
  doing: string,
): { issuedAt: Date; notAfter: Date } {
  const issuedAt = floorToSecond(now);
  const notAfter = new Date(
    Math.min(issuedAt.getTime() + WORKLOAD_LEAF_LIFETIME_MS, issuer.certificate.notAfter.getTime()),
  );
  if (notAfter.getTime() <= issuedAt.getTime()) {
    throw new PkiError(
      'CHAIN_INVALID',
      `${doing}: the workload CA certificate expired at ${issuer.certificate.notAfter.toISOString()}`,
    );
  }
  return { issuedAt, notAfter };
}

/**
 * Issues a workload leaf: fresh Ed25519 key (PKCS#8 PEM), 24 h from `now` (never past the
 * CA's own expiry), notBefore backdated by the clock-skew margin, CN = Pod, SPIFFE URI SAN, keyUsage digitalSignature, EKU clientAuth plus
 * serverAuth and the Service DNS SANs when the identity names a Service.
 */
export async function issueWorkloadLeaf(
  issuer: WorkloadIssuer,
  identity: WorkloadIdentity,
  now: Date,
): Promise<IssuedCertificate> {
  const spiffeId = workloadSpiffeId(identity);
  const { issuedAt, notAfter } = workloadLeafWindow(
    issuer,
    now,
    `issuing a workload certificate for ${identity.namespace}/${identity.pod}`,
  );
  return issueLeaf(
    { certificate: issuer.certificate, keyPair: issuer.key.keyPair },
    {
      commonName: identity.pod,
      issuedAt,
      notAfter,
      uris: [spiffeId],
      dnsNames:
        identity.service === undefined ? [] : serviceDnsNames(identity.namespace, identity.service),
      ipAddresses: [],
      extendedKeyUsages:
        identity.service === undefined ? ['clientAuth'] : ['clientAuth', 'serverAuth'],
    },
  );
}

/** Why an existing workload leaf cannot be reused, or undefined when it can. */
export type WorkloadLeafProblem =
  'unreadable' | 'key-mismatch' | 'untrusted' | 'identity-changed' | 'renewal-due';

/**
 * The certificate of a stored leaf pair when its certificate and key parse, belong together and
 * chain to one of `cas` at `now`; otherwise the first problem (`unreadable`, `key-mismatch`,
 * `untrusted`). Shared by every reuse check of an issued leaf.
 */
export function trustedLeafPair(
  certificatePem: string,
  privateKeyPem: string,
  cas: readonly CertificateInfo[],
  now: Date,
  what: string,
): CertificateInfo | 'unreadable' | 'key-mismatch' | 'untrusted' {
  let cert: CertificateInfo;
  try {
    cert = parseCertificate(certificatePem, `${what} certificate`);
    const key = parseEd25519PrivateKeyPem(privateKeyPem, `${what} key`);
    if (!publicKeysEqual(key.publicKey, cert.publicKey)) return 'key-mismatch';
  } catch {
    return 'unreadable';
  }
  try {
    verifyIssuedBy(cert, cas, now);
  } catch {
    return 'untrusted';
  }
  return cert;
}

/**
 * Checks an existing leaf for reuse: certificate and key parse and belong together, the chain
 * verifies against `cas` at `now`, CN/SANs/EKUs equal what {@link issueWorkloadLeaf} would
 * issue today, and more than six hours remain. Returns the first problem found.
 */
export function checkWorkloadLeaf(
  certificatePem: string,
  privateKeyPem: string,
  identity: WorkloadIdentity,
  cas: readonly CertificateInfo[],
  now: Date,
): WorkloadLeafProblem | undefined {
  const cert = trustedLeafPair(certificatePem, privateKeyPem, cas, now, 'workload');
  if (typeof cert === 'string') return cert;
  const wantDns =
    identity.service === undefined ? [] : serviceDnsNames(identity.namespace, identity.service);
  const wantEku = identity.service === undefined ? ['clientAuth'] : ['clientAuth', 'serverAuth'];
  const same = (a: readonly string[], b: readonly string[]): boolean =>
    a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);
  if (
    cert.commonName !== identity.pod ||
    !same(cert.uris, [workloadSpiffeId(identity)]) ||
    !same(cert.dnsNames, wantDns) ||
    cert.ipAddresses.length !== 0 ||
    !same(cert.extendedKeyUsages, wantEku)
  ) {
    return 'identity-changed';
  }
  if (cert.notAfter.getTime() - now.getTime() <= WORKLOAD_LEAF_RENEW_BEFORE_MS)
    return 'renewal-due';
  return undefined;
}
