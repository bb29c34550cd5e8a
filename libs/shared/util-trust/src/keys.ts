import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { ValidationError } from '@podmin/util-errors';
import type { SignatureAlgorithm } from '@podmin/util-desired-state';

/** A deployer's public key, checked: its algorithm, SPKI PEM and fingerprint. */
export interface PublicKeyInfo {
  algorithm: SignatureAlgorithm;
  /** SubjectPublicKeyInfo, PEM. */
  pem: string;
  /** `SHA256:<base64 of the SPKI DER's SHA-256, unpadded>`. */
  fingerprint: string;
}

const ALLOWED = 'an Ed25519 or ECDSA P-256 public key (SubjectPublicKeyInfo, PEM or DER)';

/** The algorithm a key object signs with here, or undefined when it is not one podmin accepts. */
function algorithmOf(key: KeyObject): SignatureAlgorithm | undefined {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return 'ecdsa-p256-sha256';
  }
  return undefined;
}

/** `SHA256:` and the unpadded base64 SHA-256 of a public key's SPKI DER. */
export function fingerprintOf(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Reads a deployer's public key from PEM or DER bytes; `field` names where it came from in the
 * error (e.g. `--public-key ./alice.pub`). Private keys are refused, so a secret never ends up
 * in the trust list.
 */
export function readPublicKey(bytes: Buffer | string, field: string): PublicKeyInfo {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const text = buffer.toString('utf8');
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new ValidationError('reading a deployer key', [
      { field, message: `is a private key; give ${ALLOWED}` },
    ]);
  }
  let key: KeyObject;
  try {
    key = text.includes('-----BEGIN PUBLIC KEY-----')
      ? createPublicKey({ key: text, format: 'pem' })
      : createPublicKey({ key: buffer, format: 'der', type: 'spki' });
  } catch {
    throw new ValidationError('reading a deployer key', [
      { field, message: `is not a public key; give ${ALLOWED}` },
    ]);
  }
  const algorithm = algorithmOf(key);
  if (algorithm === undefined) {
    const type =
      key.asymmetricKeyType === 'ec'
        ? `an EC key on ${key.asymmetricKeyDetails?.namedCurve ?? 'an unknown curve'}`
        : `a ${key.asymmetricKeyType ?? 'unknown'} key`;
    throw new ValidationError('reading a deployer key', [
      { field, message: `is ${type}; give ${ALLOWED}` },
    ]);
  }
  return {
    algorithm,
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: fingerprintOf(key),
  };
}

/** A new local Ed25519 signing key: PKCS#8 PEM private key and SPKI PEM public key. */
export function generateSigningKey(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** Signs index statements for one trusted deployer: a local key, or a KMS key (CLI). */
export interface IndexSigner {
  /** The deployer name the signature names (as `podmin trust add` recorded it). */
  readonly signer: string;
  readonly algorithm: SignatureAlgorithm;
  /** The signature of `statement` (Ed25519: raw 64 bytes; ECDSA: DER). */
  sign(statement: Buffer): Promise<Buffer>;
}

/**
 * A signer over a local private key (PKCS#8 PEM; Ed25519, or ECDSA P-256 for tests that stand
 * in for KMS); `field` names the key file in errors.
 */
export function localSigner(signer: string, privatePem: string, field: string): IndexSigner {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: privatePem, format: 'pem' });
  } catch {
    throw new ValidationError('reading the signing key', [
      { field, message: 'is not a PEM private key; create one with podmin trust keygen' },
    ]);
  }
  const algorithm = algorithmOf(key);
  if (algorithm === undefined) {
    throw new ValidationError('reading the signing key', [
      { field, message: 'must be an Ed25519 (podmin trust keygen) or ECDSA P-256 private key' },
    ]);
  }
  const digest = algorithm === 'ed25519' ? null : 'sha256';
  return {
    signer,
    algorithm,
    sign: (statement) => Promise.resolve(sign(digest, statement, key)),
  };
}

/** The public key of a local private key, checked like a trusted key (for `trust add`). */
export function publicKeyOfPrivate(privatePem: string, field: string): PublicKeyInfo {
  let key: KeyObject;
  try {
    key = createPublicKey(createPrivateKey({ key: privatePem, format: 'pem' }));
  } catch {
    throw new ValidationError('reading the signing key', [
      { field, message: 'is not a PEM private key' },
    ]);
  }
  return readPublicKey(key.export({ type: 'spki', format: 'pem' }).toString(), field);
}
