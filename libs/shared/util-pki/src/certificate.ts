import { createHash, X509Certificate as NodeX509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { PkiError } from './errors';
import { x509 } from './x509-provider';

/** Extended key usages podmin issues. */
export type ExtendedKeyUsageName = 'serverAuth' | 'clientAuth';

/** What podmin needs to know about one certificate, parsed once. */
export interface CertificateInfo {
  /** The certificate as one PEM block with a trailing newline. */
  pem: string;
  /** DER bytes. */
  der: Buffer;
  /** SHA-256 of the DER bytes, lowercase hex (the `podmin.dev/identity-revision` value). */
  fingerprint: string;
  /** Serial number, lowercase hex. */
  serialNumber: string;
  /** The subject's Common Name, or undefined without one. */
  commonName: string | undefined;
  /** Subject and issuer as RFC 4514-style strings. */
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** Basic constraints CA flag. */
  isCa: boolean;
  /** Key usage flags present (names as in RFC 5280, e.g. `digitalSignature`, `keyCertSign`). */
  keyUsages: string[];
  /** Extended key usages present (podmin's two by name, others by OID). */
  extendedKeyUsages: string[];
  /** Subject alternative names by type; IP addresses in canonical lowercase compressed form. */
  dnsNames: string[];
  uris: string[];
  ipAddresses: string[];
  /** The certified public key. */
  publicKey: KeyObject;
}

const PEM_CERTIFICATE =
  /-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END CERTIFICATE-----\r?\n?/g;

const KEY_USAGE_NAMES: Array<[number, string]> = [
  [x509.KeyUsageFlags.digitalSignature, 'digitalSignature'],
  [x509.KeyUsageFlags.nonRepudiation, 'nonRepudiation'],
  [x509.KeyUsageFlags.keyEncipherment, 'keyEncipherment'],
  [x509.KeyUsageFlags.dataEncipherment, 'dataEncipherment'],
  [x509.KeyUsageFlags.keyAgreement, 'keyAgreement'],
  [x509.KeyUsageFlags.keyCertSign, 'keyCertSign'],
  [x509.KeyUsageFlags.cRLSign, 'cRLSign'],
  [x509.KeyUsageFlags.encipherOnly, 'encipherOnly'],
  [x509.KeyUsageFlags.decipherOnly, 'decipherOnly'],
];

/**
 * Splits a PEM bundle into its certificate blocks (each normalised to end in one newline);
 * INVALID_CERTIFICATE when anything other than whitespace surrounds them or none is present.
 */
export function splitPemCertificates(bundle: string, what = 'certificate bundle'): string[] {
  const blocks: string[] = [];
  let rest = bundle;
  for (const match of bundle.matchAll(PEM_CERTIFICATE)) {
    blocks.push(
      `-----BEGIN CERTIFICATE-----\n${(match[1] ?? '').replace(/\r/g, '')}-----END CERTIFICATE-----\n`,
    );
    rest = rest.replace(match[0], '');
  }
  if (rest.trim() !== '' || blocks.length === 0) {
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `parsing the ${what}: expected only PEM CERTIFICATE blocks`,
    );
  }
  return blocks;
}

/** Canonical text of an IPv6 or IPv4 address (lowercase, compressed), via the URL parser. */
export function canonicalIp(address: string): string {
  if (isIPv6(address)) return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  return new URL(`http://${address}/`).hostname;
}

/** Parses exactly one PEM certificate (or DER bytes); INVALID_CERTIFICATE when unreadable. */
export function parseCertificate(
  input: string | Uint8Array,
  what = 'certificate',
): CertificateInfo {
  let der: Buffer;
  if (typeof input === 'string') {
    const blocks = splitPemCertificates(input, what);
    if (blocks.length !== 1) {
      throw new PkiError(
        'INVALID_CERTIFICATE',
        `parsing the ${what}: expected one certificate, found ${blocks.length}`,
      );
    }
    der = Buffer.from(x509.PemConverter.decodeFirst(blocks[0] ?? ''));
  } else {
    der = Buffer.from(input);
  }
  let cert: x509.X509Certificate;
  let nodeCert: NodeX509Certificate;
  try {
    cert = new x509.X509Certificate(der);
    nodeCert = new NodeX509Certificate(der);
  } catch (err) {
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `parsing the ${what}: not a valid X.509 certificate`,
      { cause: err },
    );
  }
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  const keyUsage = cert.getExtension(x509.KeyUsagesExtension)?.usages ?? 0;
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [];
  const cn = cert.subjectName.getField('CN');
  return {
    pem: cert.toString('pem').replace(/\r/g, '').trimEnd() + '\n',
    der,
    fingerprint: createHash('sha256').update(der).digest('hex'),
    serialNumber: cert.serialNumber.toLowerCase(),
    commonName: cn.length === 1 ? cn[0] : undefined,
    subject: cert.subject,
    issuer: cert.issuer,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCa: cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false,
    keyUsages: KEY_USAGE_NAMES.filter(([flag]) => (keyUsage & flag) !== 0).map(([, n]) => n),
    extendedKeyUsages: eku.map((oid) =>
      oid === (x509.ExtendedKeyUsage.serverAuth as string)
        ? 'serverAuth'
        : oid === (x509.ExtendedKeyUsage.clientAuth as string)
          ? 'clientAuth'
          : String(oid),
    ),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    uris: names.filter((n) => n.type === 'url').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => canonicalIp(n.value)),
    publicKey: nodeCert.publicKey,
  };
}

/** SHA-256 of a certificate's DER, lowercase hex: the `podmin.dev/identity-revision` value. */
export function certificateFingerprint(pem: string): string {
  return parseCertificate(pem).fingerprint;
}

/** True when `now` lies within the certificate's validity period (both ends inclusive). */
export function isValidAt(cert: CertificateInfo, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() <= cert.notAfter.getTime();
}

/**
 * Verifies that `leaf` was issued by one of `cas` and that both are valid at `now`; returns
 * the issuing CA. CHAIN_INVALID names why when no CA qualifies.
 */
export function verifyIssuedBy(
  leaf: CertificateInfo,
  cas: readonly CertificateInfo[],
  now: Date,
): CertificateInfo {
  if (!isValidAt(leaf, now)) {
    throw new PkiError(
      'CHAIN_INVALID',
      `verifying certificate ${leaf.subject}: not valid at ${now.toISOString()} (valid ${leaf.notBefore.toISOString()} to ${leaf.notAfter.toISOString()})`,
    );
  }
  const leafCert = new NodeX509Certificate(leaf.der);
  for (const ca of cas) {
    if (!ca.isCa || !ca.keyUsages.includes('keyCertSign') || !isValidAt(ca, now)) continue;
    const caCert = new NodeX509Certificate(ca.der);
    if (leafCert.checkIssued(caCert) && leafCert.verify(ca.publicKey)) return ca;
  }
  throw new PkiError(
    'CHAIN_INVALID',
    `verifying certificate ${leaf.subject}: no CA certificate valid at ${now.toISOString()} issued it`,
  );
}
