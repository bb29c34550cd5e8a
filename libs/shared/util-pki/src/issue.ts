import { randomBytes } from 'node:crypto';
import type { Ed25519KeyPair } from './ed25519';
import {
  ED25519_ALGORITHM,
  generateEd25519KeyPair,
  privateKeyToPkcs8Pem,
  toWebCryptoKeys,
} from './ed25519';
import type { CertificateInfo } from './certificate';
import { parseCertificate } from './certificate';
import { backdatedNotBefore } from './clock';
import { x509 } from './x509-provider';

/** A freshly issued certificate with its private key. */
export interface IssuedCertificate {
  /** The certificate, one PEM block. */
  certificatePem: string;
  /** Its private key, unencrypted PKCS#8 PEM. */
  privateKeyPem: string;
  /** The parsed certificate (fingerprint, validity, names). */
  certificate: CertificateInfo;
}

/** A CA able to sign: its parsed certificate and key pair. */
export interface SigningCa {
  certificate: CertificateInfo;
  keyPair: Ed25519KeyPair;
}

/** A random positive 128-bit serial number as hex, its first byte in 0x01..0x7f (internal). */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/**
 * Creates a self-signed Ed25519 CA certificate (CA:true, keyCertSign + cRLSign, SKI), valid from
 * `issuedAt` backdated by the clock-skew margin until `notAfter` (internal).
 */
export async function createSelfSignedCa(
  keyPair: Ed25519KeyPair,
  commonName: string,
  issuedAt: Date,
  notAfter: Date,
): Promise<CertificateInfo> {
  const keys = await toWebCryptoKeys(keyPair);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: [{ CN: [commonName] }],
    notBefore: backdatedNotBefore(issuedAt),
    notAfter,
    keys,
    signingAlgorithm: ED25519_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return parseCertificate(cert.toString('pem'));
}

/** What goes into an end-entity certificate (internal). */
export interface LeafTemplate {
  commonName: string;
  /** When it is issued; its notBefore is this backdated by the clock-skew margin. */
  issuedAt: Date;
  notAfter: Date;
  uris: string[];
  dnsNames: string[];
  ipAddresses: string[];
  extendedKeyUsages: Array<'serverAuth' | 'clientAuth'>;
}

/**
 * Issues an Ed25519 end-entity certificate with a fresh key, signed by `ca`; valid from the
 * template's `issuedAt` backdated by the clock-skew margin until its `notAfter` (internal).
 */
export async function issueLeaf(ca: SigningCa, template: LeafTemplate): Promise<IssuedCertificate> {
  const leafKeys = generateEd25519KeyPair();
  const [caKeys, subjectKeys] = await Promise.all([
    toWebCryptoKeys(ca.keyPair),
    toWebCryptoKeys(leafKeys),
  ]);
  const caCert = new x509.X509Certificate(ca.certificate.der);
  const names: x509.JsonGeneralName[] = [
    ...template.uris.map((value) => ({ type: 'url' as const, value })),
    ...template.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...template.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: [{ CN: [template.commonName] }],
    issuer: caCert.subjectName,
    notBefore: backdatedNotBefore(template.issuedAt),
    notAfter: template.notAfter,
    publicKey: subjectKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ED25519_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(
        template.extendedKeyUsages.map((u) => x509.ExtendedKeyUsage[u]),
        false,
      ),
      // A certificate whose subject is only in the SAN would need a critical SAN; ours always
      // has a CN, so RFC 5280 §4.2.1.6 lets the SAN stay non-critical.
      new x509.SubjectAlternativeNameExtension(names, false),
      await x509.SubjectKeyIdentifierExtension.create(subjectKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  return {
    certificatePem: parseCertificate(cert.toString('pem')).pem,
    privateKeyPem: privateKeyToPkcs8Pem(leafKeys.privateKey),
    certificate: parseCertificate(cert.toString('pem')),
  };
}
