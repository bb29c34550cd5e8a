import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { ValidationError } from '@podmin/util-errors';
import {
  fingerprintOf,
  generateSigningKey,
  localSigner,
  publicKeyOfPrivate,
  readPublicKey,
} from './keys';

/** The ValidationError `run` throws; fails the test when it returns. */
function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('expected a ValidationError');
}

const pem = (key: { export(o: object): string | Buffer }, type: 'spki' | 'pkcs8'): string =>
  key.export({ type, format: 'pem' }).toString();

describe('readPublicKey', () => {
  it('reads Ed25519 and P-256 keys from PEM and DER, with a stable fingerprint', () => {
    const ed = generateSigningKey();
    const info = readPublicKey(ed.publicPem, '--public-key alice.pub');
    expect(info.algorithm).toBe('ed25519');
    expect(info.pem).toBe(ed.publicPem);
    expect(info.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const der = createPublicKey(ed.publicPem).export({ type: 'spki', format: 'der' });
    expect(readPublicKey(der, 'der')).toEqual(info);
    expect(fingerprintOf(createPublicKey(ed.publicPem))).toBe(info.fingerprint);

    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    expect(readPublicKey(pem(p256, 'spki'), 'kms').algorithm).toBe('ecdsa-p256-sha256');
  });

  it('refuses an RSA key, another curve, a private key and garbage, naming the field', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
    const ed = generateSigningKey();
    const cases: Array<[string | Buffer, RegExp]> = [
      [pem(rsa.publicKey, 'spki'), /is a rsa key; give an Ed25519 or ECDSA P-256 public key/],
      [pem(p384, 'spki'), /is an EC key on secp384r1/],
      [pem(rsa.privateKey, 'pkcs8'), /is a private key/],
      [ed.privatePem, /is a private key/],
      ['hello, not a key', /is not a public key/],
      [Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]), /is not a public key/],
    ];
    for (const [bytes, message] of cases) {
      const err = refusal(() => readPublicKey(bytes, '--public-key ./bob.pub'));
      expect(err.problems).toHaveLength(1);
      expect(err.problems[0]?.field).toBe('--public-key ./bob.pub');
      expect(err.problems[0]?.message).toMatch(message);
      // The message names the field, never the key material.
      expect(err.message).toContain('--public-key ./bob.pub');
      expect(err.message).not.toContain('BEGIN');
    }
  });
});

describe('local signing keys', () => {
  it('signs with the key keygen writes, verifiable with its public key', async () => {
    const { privatePem, publicPem } = generateSigningKey();
    expect(privatePem).toContain('-----BEGIN PRIVATE KEY-----');
    const signer = localSigner('alice', privatePem, 'alice.key');
    expect(signer).toMatchObject({ signer: 'alice', algorithm: 'ed25519' });
    const message = Buffer.from('statement');
    const signature = await signer.sign(message);
    expect(verify(null, message, publicPem, signature)).toBe(true);
    expect(publicKeyOfPrivate(privatePem, 'alice.key').pem).toBe(publicPem);
  });

  it('signs with a P-256 key as ECDSA over SHA-256 (DER), as KMS ECDSA_SHA_256 does', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const signer = localSigner('ci', pem(privateKey, 'pkcs8'), 'ci.key');
    expect(signer.algorithm).toBe('ecdsa-p256-sha256');
    const message = Buffer.from('statement');
    const signature = await signer.sign(message);
    expect(signature[0]).toBe(0x30);
    expect(verify('sha256', message, publicKey, signature)).toBe(true);
  });

  it('refuses a key file that is not an Ed25519 or P-256 private key, naming the file', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const cases: Array<[string, RegExp]> = [
      ['garbage', /is not a PEM private key/],
      [generateSigningKey().publicPem, /is not a PEM private key/],
      [pem(rsa, 'pkcs8'), /must be an Ed25519 \(podmin trust keygen\) or ECDSA P-256 private key/],
    ];
    for (const [text, message] of cases) {
      const err = refusal(() => localSigner('alice', text, '--signing-key ./k.pem'));
      expect(err.problems.map((p) => p.field)).toEqual(['--signing-key ./k.pem']);
      expect(err.problems[0]?.message).toMatch(message);
    }
    expect(refusal(() => publicKeyOfPrivate('garbage', 'k.pem')).problems[0]?.field).toBe('k.pem');
  });
});
