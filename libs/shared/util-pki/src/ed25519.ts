import { createPrivateKey, createPublicKey, generateKeyPairSync, webcrypto } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { PkiError } from './errors';

/** An Ed25519 key pair as node KeyObjects (the private half never leaves process memory). */
export interface Ed25519KeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

/** Length of a raw Ed25519 private key (its seed), RFC 8032. */
export const ED25519_SEED_BYTES = 32;

// RFC 8410 §7: OneAsymmetricKey { version 0, AlgorithmIdentifier id-Ed25519 (1.3.101.112),
// OCTET STRING { OCTET STRING seed } }; only the 32 seed bytes vary, so the DER prefix is fixed.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const ED25519 = { name: 'Ed25519' } as const;

/** Derives the Ed25519 key pair of a raw 32-byte seed by wrapping it as PKCS#8. */
export function ed25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (seed.length !== ED25519_SEED_BYTES) {
    throw new PkiError(
      'INVALID_KEY',
      `deriving an Ed25519 key: the seed is ${seed.length} bytes, expected ${ED25519_SEED_BYTES}`,
    );
  }
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** Generates a fresh Ed25519 key pair. */
export function generateEd25519KeyPair(): Ed25519KeyPair {
  return generateKeyPairSync('ed25519');
}

/** The unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) of a private key. */
export function privateKeyToPkcs8Pem(privateKey: KeyObject): string {
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** Parses an unencrypted PKCS#8 PEM Ed25519 private key; INVALID_KEY for anything else. */
export function parseEd25519PrivateKeyPem(pem: string, what = 'private key'): Ed25519KeyPair {
  if (
    !/^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\r?\n?$/.test(
      pem,
    )
  ) {
    throw new PkiError('INVALID_KEY', `parsing the ${what}: not one unencrypted PKCS#8 PEM block`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new PkiError('INVALID_KEY', `parsing the ${what}: unreadable PKCS#8`, { cause: err });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new PkiError(
      'INVALID_KEY',
      `parsing the ${what}: key type is ${privateKey.asymmetricKeyType ?? 'unknown'}, expected ed25519`,
    );
  }
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** The DER SubjectPublicKeyInfo of a public key. */
export function publicKeySpki(publicKey: KeyObject): Buffer {
  return publicKey.export({ format: 'der', type: 'spki' });
}

/** True when both public keys are the same key (compared as DER SubjectPublicKeyInfo). */
export function publicKeysEqual(a: KeyObject, b: KeyObject): boolean {
  return publicKeySpki(a).equals(publicKeySpki(b));
}

/** WebCrypto handles of a key pair, as @peculiar/x509 needs them to sign (internal). */
export async function toWebCryptoKeys(pair: Ed25519KeyPair): Promise<webcrypto.CryptoKeyPair> {
  const pkcs8 = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
  const [privateKey, publicKey] = await Promise.all([
    webcrypto.subtle.importKey('pkcs8', pkcs8, ED25519, false, ['sign']),
    webcrypto.subtle.importKey('spki', publicKeySpki(pair.publicKey), ED25519, true, ['verify']),
  ]);
  return { privateKey, publicKey };
}

/** The signing algorithm parameter for Ed25519 certificates (internal). */
export const ED25519_ALGORITHM = ED25519;
