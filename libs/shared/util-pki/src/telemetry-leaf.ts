import type { CertificateInfo } from './certificate';
import { parseCertificate, splitPemCertificates } from './certificate';
import { PkiError } from './errors';
import type { IssuedCertificate } from './issue';
import { issueLeaf } from './issue';
import { assertDnsLabel, clusterTrustDomain } from './names';
import {
  WORKLOAD_LEAF_RENEW_BEFORE_MS,
  trustedLeafPair,
  workloadLeafWindow,
  type WorkloadIssuer,
  type WorkloadLeafProblem,
} from './workload-leaf';

/** Who a node's log-export client leaf names: the node of a cluster. */
export interface TelemetryIdentity {
  cluster: string;
  /** The agent's node ID (`[A-Za-z0-9._-]{1,63}`, not `.` or `..`): one SPIFFE path segment. */
  nodeId: string;
}

const NODE_ID = /^[A-Za-z0-9._-]{1,63}$/;

/** Validates a telemetry identity; INVALID_NAME names the bad part. */
export function assertTelemetryIdentity(identity: TelemetryIdentity): void {
  assertDnsLabel(identity.cluster, 'cluster');
  if (!NODE_ID.test(identity.nodeId) || identity.nodeId === '.' || identity.nodeId === '..')
    throw new PkiError(
      'INVALID_NAME',
      `node ID ${JSON.stringify(identity.nodeId)} must be 1–63 letters, digits, '.', '_' or '-' (not . or ..)`,
    );
}

/** `spiffe://<cluster>.podmin.internal/system/otel-logs/node/<node-id>` (the spec's URI SAN). */
export function otelLogsSpiffeId(identity: TelemetryIdentity): string {
  assertTelemetryIdentity(identity);
  return `spiffe://${clusterTrustDomain(identity.cluster)}/system/otel-logs/node/${identity.nodeId}`;
}

/** Common Name of the log-export leaf (names only; authorization is the URI SAN). */
export function otelLogsCommonName(identity: TelemetryIdentity): string {
  return `otel-logs.${identity.nodeId}`;
}

/**
 * Issues the node's log-export client leaf from the workload CA: fresh Ed25519 key, 24 h (never
 * past the CA), backdated like every leaf, the SPIFFE URI SAN only, keyUsage digitalSignature
 * and EKU clientAuth only: it cannot serve TLS.
 */
export async function issueTelemetryLeaf(
  issuer: WorkloadIssuer,
  identity: TelemetryIdentity,
  now: Date,
): Promise<IssuedCertificate> {
  const uri = otelLogsSpiffeId(identity);
  const { issuedAt, notAfter } = workloadLeafWindow(
    issuer,
    now,
    `issuing the log-export certificate of node ${identity.nodeId}`,
  );
  return issueLeaf(
    { certificate: issuer.certificate, keyPair: issuer.key.keyPair },
    {
      commonName: otelLogsCommonName(identity),
      issuedAt,
      notAfter,
      uris: [uri],
      dnsNames: [],
      ipAddresses: [],
      extendedKeyUsages: ['clientAuth'],
    },
  );
}

/**
 * Why an existing log-export leaf cannot be kept, or undefined when it can: the pair parses
 * and matches, the chain verifies at `now`, the names and usages are exactly what
 * {@link issueTelemetryLeaf} issues (client only), and more than six hours remain.
 */
export function checkTelemetryLeaf(
  certificatePem: string,
  privateKeyPem: string,
  identity: TelemetryIdentity,
  cas: readonly CertificateInfo[],
  now: Date,
): WorkloadLeafProblem | undefined {
  const cert = trustedLeafPair(certificatePem, privateKeyPem, cas, now, 'log-export');
  if (typeof cert === 'string') return cert;
  if (
    cert.isCa ||
    cert.commonName !== otelLogsCommonName(identity) ||
    cert.uris.length !== 1 ||
    cert.uris[0] !== otelLogsSpiffeId(identity) ||
    cert.dnsNames.length !== 0 ||
    cert.ipAddresses.length !== 0 ||
    cert.extendedKeyUsages.length !== 1 ||
    cert.extendedKeyUsages[0] !== 'clientAuth'
  )
    return 'identity-changed';
  if (cert.notAfter.getTime() - now.getTime() <= WORKLOAD_LEAF_RENEW_BEFORE_MS)
    return 'renewal-due';
  return undefined;
}

/** Largest exporter CA bundle accepted (a few hundred CA certificates). */
export const MAX_CA_BUNDLE_BYTES = 1024 * 1024;

/**
 * Validates a private server-CA bundle for the log exporter: PEM certificates only (no key or
 * other block, nothing around them), each a CA (basicConstraints CA:true), at least one valid
 * at `now`. Returns the bundle normalised (one block per certificate, newline-terminated).
 * INVALID_CERTIFICATE names what is wrong.
 */
export function validateCaBundle(bytes: Uint8Array, now: Date, what = 'CA bundle'): string {
  if (bytes.length > MAX_CA_BUNDLE_BYTES)
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `${what}: ${bytes.length} bytes, more than the ${MAX_CA_BUNDLE_BYTES} a CA bundle may have`,
    );
  const text = Buffer.from(bytes).toString('utf8');
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `${what}: contains a private key; a CA bundle holds certificates only`,
    );
  const blocks = splitPemCertificates(text, what);
  const certs = blocks.map((pem, i) => parseCertificate(pem, `${what} certificate ${i + 1}`));
  certs.forEach((cert, i) => {
    if (!cert.isCa)
      throw new PkiError(
        'INVALID_CERTIFICATE',
        `${what}: certificate ${i + 1} (${cert.subject}) is not a CA (basicConstraints CA:false); a server-CA bundle holds CA certificates only`,
      );
  });
  if (
    !certs.some(
      (c) => c.notBefore.getTime() <= now.getTime() && now.getTime() < c.notAfter.getTime(),
    )
  )
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `${what}: no certificate in it is valid at ${now.toISOString()}`,
    );
  return certs.map((c) => c.pem).join('');
}
