import { randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { CertificateInfo } from './certificate';
import { parseCertificate } from './certificate';
import { DAY_MS, floorToSecond } from './clock';
import type { Ed25519KeyPair } from './ed25519';
import { ED25519_SEED_BYTES, ed25519KeyPairFromSeed, publicKeysEqual } from './ed25519';
import { PkiError } from './errors';
import { createSelfSignedCa } from './issue';
import { assertDnsLabel } from './names';

/** Lifetime of a workload CA certificate: one year. */
export const WORKLOAD_CA_LIFETIME_MS = 365 * DAY_MS;

/**
 * The workload CA private key, held only in process memory. Built from the secret-store value;
 * it prints as `[WorkloadCaKey]` so it cannot leak into logs by accident.
 */
export class WorkloadCaKey {
  /** The key pair derived from the stable seed. */
  readonly keyPair: Ed25519KeyPair;

  private constructor(keyPair: Ed25519KeyPair) {
    this.keyPair = keyPair;
  }

  /** Derives the key from the raw 32-byte Ed25519 seed. */
  static fromSeed(seed: Uint8Array): WorkloadCaKey {
    return new WorkloadCaKey(ed25519KeyPairFromSeed(seed));
  }

  /** The public half. */
  get publicKey(): KeyObject {
    return this.keyPair.publicKey;
  }

  /** Keeps the key out of `JSON.stringify`. */
  toJSON(): string {
    return '[WorkloadCaKey]';
  }

  /** Keeps the key out of string interpolation. */
  toString(): string {
    return '[WorkloadCaKey]';
  }
}

/**
 * Parses the workload CA secret value stored at `/<cluster>/_system/workload-ca-key`: the
 * standard base64 (padded) encoding of 32 random bytes, surrounding whitespace ignored.
 * INVALID_SECRET for anything else (the message never contains the value).
 */
export function parseWorkloadCaSecret(value: string | Uint8Array): WorkloadCaKey {
  const text = (typeof value === 'string' ? value : Buffer.from(value).toString('utf8')).trim();
  const seed = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text) || seed.length !== ED25519_SEED_BYTES) {
    throw new PkiError(
      'INVALID_SECRET',
      'reading the workload CA key: the secret value is not the base64 encoding of 32 bytes',
      {
        hint: 'the value is written once by `podmin setup`; restore it from a backup rather than editing it',
      },
    );
  }
  return WorkloadCaKey.fromSeed(seed);
}

/** A new random workload CA secret value in the format {@link parseWorkloadCaSecret} reads. */
export function generateWorkloadCaSecretValue(): string {
  return randomBytes(ED25519_SEED_BYTES).toString('base64');
}

/** The subject Common Name of a cluster's workload CA certificates. */
export function workloadCaCommonName(cluster: string): string {
  assertDnsLabel(cluster, 'cluster');
  return `podmin workload CA ${cluster}`;
}

/**
 * Creates a self-signed workload CA certificate valid for one year from `now` (to the second),
 * its notBefore backdated by the clock-skew margin so nodes whose clocks run behind trust it
 * at once (rotation decides on notAfter and its own recorded times, never on notBefore).
 */
export async function createWorkloadCaCertificate(
  key: WorkloadCaKey,
  cluster: string,
  now: Date,
  lifetimeMs: number = WORKLOAD_CA_LIFETIME_MS,
): Promise<CertificateInfo> {
  const issuedAt = floorToSecond(now);
  return createSelfSignedCa(
    key.keyPair,
    workloadCaCommonName(cluster),
    issuedAt,
    new Date(issuedAt.getTime() + lifetimeMs),
  );
}

/**
 * Parses a downloaded workload CA certificate and checks it certifies the stored key, is a
 * self-signed CA able to sign certificates, and names the cluster; CA_KEY_MISMATCH or
 * INVALID_CERTIFICATE otherwise. Agents call this before issuing any leaf.
 */
export function verifyWorkloadCaCertificate(
  pem: string,
  key: WorkloadCaKey,
  cluster: string,
): CertificateInfo {
  const cert = parseCertificate(pem, 'workload CA certificate');
  if (!publicKeysEqual(cert.publicKey, key.publicKey)) {
    throw new PkiError(
      'CA_KEY_MISMATCH',
      `checking workload CA certificate ${cert.fingerprint}: its public key is not the stored workload CA key`,
      {
        hint: 'the bucket and the secret store belong to different clusters or the CA state was replaced',
      },
    );
  }
  if (!cert.isCa || !cert.keyUsages.includes('keyCertSign')) {
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `checking workload CA certificate ${cert.fingerprint}: not a CA certificate with keyCertSign`,
    );
  }
  if (cert.commonName !== workloadCaCommonName(cluster) || cert.subject !== cert.issuer) {
    throw new PkiError(
      'INVALID_CERTIFICATE',
      `checking workload CA certificate ${cert.fingerprint}: subject ${cert.subject} is not the self-signed workload CA of cluster ${cluster}`,
    );
  }
  return cert;
}
