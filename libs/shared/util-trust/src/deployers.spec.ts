import { generateKeyPairSync } from 'node:crypto';
import { ValidationError } from '@podmin/util-errors';
import {
  MAX_DEPLOYERS,
  isKmsKeyArn,
  parseDeployers,
  serializeDeployers,
  type Deployer,
} from './deployers';
import { generateSigningKey } from './keys';

const SOURCE = '/demo/_system/deployers';
const ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const alice: Deployer = {
  name: 'alice',
  algorithm: 'ed25519',
  publicKey: generateSigningKey().publicPem,
  added: '2026-12-01T10:00:00.000Z',
};
const ci: Deployer = {
  name: 'ci',
  algorithm: 'ecdsa-p256-sha256',
  publicKey: generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString(),
  kmsKeyArn: ARN,
  added: '2026-12-02T10:00:00.000Z',
};

/** The fields `parseDeployers` names for `body`; fails the test when it accepts it. */
function fieldsOf(body: unknown): string[] {
  try {
    parseDeployers(typeof body === 'string' ? body : JSON.stringify(body), SOURCE);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    expect(err.message).toContain(`reading ${SOURCE}`);
    return err.problems.map((p) => p.field);
  }
  throw new Error('expected the trust list to be refused');
}

describe('the trust list', () => {
  it('round-trips, sorted by name, fields in a fixed order', () => {
    const text = serializeDeployers({ version: 1, deployers: [ci, alice] });
    expect(text.indexOf('"alice"')).toBeLessThan(text.indexOf('"ci"'));
    expect(Object.keys((JSON.parse(text) as { deployers: object[] }).deployers[1] ?? {})).toEqual([
      'name',
      'algorithm',
      'publicKey',
      'kmsKeyArn',
      'added',
    ]);
    expect(parseDeployers(text, SOURCE)).toEqual({ version: 1, deployers: [alice, ci] });
    expect(parseDeployers(Buffer.from(text), SOURCE).deployers).toHaveLength(2);
  });

  it('names every bad field', () => {
    const doc = (deployers: unknown[], extra: object = {}) => ({ version: 1, deployers, ...extra });
    expect(fieldsOf('{not json')).toEqual(['(document)']);
    expect(fieldsOf([])).toEqual(['(document)']);
    expect(fieldsOf({ version: 2, deployers: [], owner: 'x' })).toEqual(['owner', 'version']);
    expect(fieldsOf({ version: 1 })).toEqual(['deployers']);
    expect(fieldsOf(doc(['alice']))).toEqual(['deployers[0]']);
    expect(fieldsOf(doc([{ ...alice, name: 'Alice Smith' }]))).toEqual(['deployers[0].name']);
    expect(fieldsOf(doc([alice, alice]))).toEqual(['deployers[1].name']);
    expect(fieldsOf(doc([{ ...alice, comment: 'hi' }]))).toEqual(['deployers[0].comment']);
    expect(fieldsOf(doc([{ ...alice, algorithm: 'rsa' }]))).toEqual(['deployers[0].algorithm']);
    expect(fieldsOf(doc([{ ...alice, algorithm: 'ecdsa-p256-sha256' }]))).toEqual([
      'deployers[0].algorithm',
    ]);
    expect(fieldsOf(doc([{ ...alice, publicKey: 'garbage' }]))).toEqual(['deployers[0].publicKey']);
    expect(fieldsOf(doc([{ ...alice, publicKey: 7 }]))).toEqual(['deployers[0].publicKey']);
    expect(fieldsOf(doc([{ ...ci, kmsKeyArn: 'alias/podmin' }]))).toEqual([
      'deployers[0].kmsKeyArn',
    ]);
    expect(fieldsOf(doc([{ ...alice, added: 'yesterday' }]))).toEqual(['deployers[0].added']);
    const many = Array.from({ length: MAX_DEPLOYERS + 1 }, (_, i) => ({ ...alice, name: `d${i}` }));
    expect(fieldsOf(doc(many))).toEqual(['deployers']);
  });

  it('refuses a private key put in the list by hand, without echoing it', () => {
    const { privatePem } = generateSigningKey();
    let message = '';
    try {
      parseDeployers(
        JSON.stringify({ version: 1, deployers: [{ ...alice, publicKey: privatePem }] }),
        SOURCE,
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('deployers[0].publicKey: is a private key');
    expect(message).not.toContain('BEGIN');
  });

  it('recognizes KMS key ARNs only', () => {
    expect(isKmsKeyArn(ARN)).toBe(true);
    expect(isKmsKeyArn('arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/mrk-1')).toBe(true);
    expect(isKmsKeyArn('alias/podmin')).toBe(false);
    expect(isKmsKeyArn('arn:aws:kms:eu-west-1:123456789012:alias/podmin')).toBe(false);
    expect(isKmsKeyArn(`${ARN}\n`)).toBe(false);
  });
});
