import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import type { KmsKeyFacts, KmsKeys } from '../trust.ports';

/** A hand-written KmsKeys fake: keys held in memory, each with the facts DescribeKey would give. */
export class FakeKmsKeys implements KmsKeys {
  /** Every call, as `method arn`. */
  readonly calls: string[] = [];
  private readonly keys = new Map<string, { facts: KmsKeyFacts; key?: KeyObject }>();

  /** Adds an ECC_NIST_P256 SIGN_VERIFY key (a local P-256 key stands in for KMS's). */
  addSigningKey(arn: string): void {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.keys.set(arn, {
      facts: {
        arn,
        keySpec: 'ECC_NIST_P256',
        keyUsage: 'SIGN_VERIFY',
        signingAlgorithms: ['ECDSA_SHA_256'],
        enabled: true,
      },
      key: privateKey,
    });
  }

  /** Adds a key with these facts and no usable key material (a symmetric key, say). */
  addOtherKey(facts: KmsKeyFacts): void {
    this.keys.set(facts.arn, { facts });
  }

  describe(arn: string): Promise<KmsKeyFacts> {
    this.calls.push(`describe ${arn}`);
    return Promise.resolve(this.get(arn).facts);
  }

  publicKey(arn: string): Promise<Buffer> {
    this.calls.push(`publicKey ${arn}`);
    const { key } = this.get(arn);
    if (key === undefined)
      return Promise.reject(new PodminError('INVALID_ARGUMENT', 'no public key'));
    return Promise.resolve(createPublicKey(key).export({ format: 'der', type: 'spki' }));
  }

  sign(arn: string, message: Buffer): Promise<Buffer> {
    this.calls.push(`sign ${arn}`);
    const { key } = this.get(arn);
    if (key === undefined)
      return Promise.reject(new PodminError('INVALID_ARGUMENT', 'cannot sign'));
    return Promise.resolve(sign('sha256', message, key));
  }

  private get(arn: string): { facts: KmsKeyFacts; key?: KeyObject } {
    const found = this.keys.get(arn);
    if (found === undefined) throw new PodminError('NOT_FOUND', `no such key ${arn}`);
    return found;
  }
}
