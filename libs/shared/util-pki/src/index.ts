/** Clock port, the system clock and duration constants. */
export * from './clock';
/** PkiError and its reasons. */
export * from './errors';
/** Ed25519 key pairs: from a seed, generated, PKCS#8 PEM in and out, comparison. */
export {
  ED25519_SEED_BYTES,
  ed25519KeyPairFromSeed,
  generateEd25519KeyPair,
  parseEd25519PrivateKeyPem,
  privateKeyToPkcs8Pem,
  publicKeysEqual,
  publicKeySpki,
  type Ed25519KeyPair,
} from './ed25519';
/** Names: RFC 1123 checks, trust domains and SPIFFE IDs. */
export * from './names';
/** Certificate parsing, PEM bundles, fingerprints and chain verification. */
export * from './certificate';
/** The result type of every issuance. */
export type { IssuedCertificate } from './issue';
/** The workload CA: secret value, key, certificate creation and verification. */
export * from './workload-ca';
/** Workload leaves: identity, SPIFFE ID, Service SANs, issuance and reuse checks. */
export * from './workload-leaf';
/** The node's log-export client leaf and the exporter's private server-CA bundle. */
export * from './telemetry-leaf';
/** The cluster coordination CA, its secret value, and node leaves. */
export * from './cluster-ca';
/** TLS 1.3 mutual-auth options and the SPIFFE peer check. */
export * from './mtls';
