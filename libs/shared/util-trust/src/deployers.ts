import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { isDnsLabel } from '@podmin/util-names';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithm } from '@podmin/util-desired-state';
import { readPublicKey } from './keys';

/** Key of the trust list under `/<cluster>/_system/` in Parameter Store (nodes read it). */
export const DEPLOYERS_KEY = 'deployers';

/** At most this many trusted deployers: ten KMS deployers (about 360 bytes each) fit one standard 4 KiB parameter. */
export const MAX_DEPLOYERS = 10;

/** One trusted deployer: a name, its public key, and the KMS key it lives in (if any). */
export interface Deployer {
  /** A DNS-1123 label; signatures name it. */
  name: string;
  algorithm: SignatureAlgorithm;
  /** SubjectPublicKeyInfo, PEM. */
  publicKey: string;
  /** The AWS KMS key ARN, when the private key is a KMS key (no private key on any machine). */
  kmsKeyArn?: string;
  /** When `podmin trust add` recorded it (ISO 8601). */
  added: string;
}

/** The trust list as stored: `{"version":1,"deployers":[…]}`, names unique and sorted. */
export interface DeployersDoc {
  version: 1;
  deployers: readonly Deployer[];
}

const FIELDS = ['name', 'algorithm', 'publicKey', 'kmsKeyArn', 'added'];
const KMS_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/** True when `value` is a KMS key ARN (`arn:<partition>:kms:<region>:<account>:key/<id>`). */
export function isKmsKeyArn(value: string): boolean {
  return KMS_ARN.test(value);
}

/**
 * Strictly parses the stored trust list; `source` names it in errors (the secret's name). Every
 * key is re-read, so a list edited by hand with a key of another type is refused as a whole.
 */
export function parseDeployers(body: Buffer | string, source: string): DeployersDoc {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (err) {
    throw new ValidationError(
      `reading ${source}`,
      [{ field: '(document)', message: 'is not valid JSON' }],
      { cause: err },
    );
  }
  const fail = (problems: FieldProblem[]): never => {
    throw new ValidationError(`reading ${source}`, problems);
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail([{ field: '(document)', message: 'must be {"version":1,"deployers":[…]}' }]);
  }
  const doc = raw as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const field of Object.keys(doc)) {
    if (field !== 'version' && field !== 'deployers')
      problems.push({ field, message: 'unknown field; allowed: version, deployers' });
  }
  if (doc['version'] !== 1) problems.push({ field: 'version', message: 'must be 1' });
  const list = doc['deployers'];
  if (!Array.isArray(list))
    return fail([...problems, { field: 'deployers', message: 'must be a list' }]);
  if (list.length > MAX_DEPLOYERS)
    problems.push({ field: 'deployers', message: `holds at most ${MAX_DEPLOYERS} deployers` });
  const deployers: Deployer[] = [];
  const names = new Set<string>();
  list.forEach((item: unknown, i) => {
    const at = (field: string): string => `deployers[${i}].${field}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push({ field: `deployers[${i}]`, message: 'must be an object' });
      return;
    }
    const d = item as Record<string, unknown>;
    for (const field of Object.keys(d)) {
      if (!FIELDS.includes(field))
        problems.push({
          field: at(field),
          message: `unknown field; allowed: ${FIELDS.join(', ')}`,
        });
    }
    const { name, algorithm, publicKey, kmsKeyArn, added } = d;
    if (typeof name !== 'string' || !isDnsLabel(name)) {
      problems.push({ field: at('name'), message: 'must be a DNS-1123 label' });
      return;
    }
    if (names.has(name))
      problems.push({ field: at('name'), message: `duplicate deployer ${name}` });
    names.add(name);
    if (!(SIGNATURE_ALGORITHMS as readonly unknown[]).includes(algorithm)) {
      problems.push({
        field: at('algorithm'),
        message: `must be one of ${SIGNATURE_ALGORITHMS.join(', ')}`,
      });
      return;
    }
    if (typeof publicKey !== 'string') {
      problems.push({ field: at('publicKey'), message: 'must be a PEM public key' });
      return;
    }
    try {
      const info = readPublicKey(publicKey, at('publicKey'));
      if (info.algorithm !== algorithm)
        problems.push({
          field: at('algorithm'),
          message: `is ${String(algorithm)} but the key is ${info.algorithm}`,
        });
    } catch (err) {
      problems.push(
        ...((err as ValidationError).problems ?? [
          { field: at('publicKey'), message: 'is not a public key' },
        ]),
      );
      return;
    }
    if (kmsKeyArn !== undefined && (typeof kmsKeyArn !== 'string' || !isKmsKeyArn(kmsKeyArn)))
      problems.push({ field: at('kmsKeyArn'), message: 'must be a KMS key ARN' });
    if (typeof added !== 'string' || Number.isNaN(Date.parse(added)))
      problems.push({ field: at('added'), message: 'must be an ISO 8601 time' });
    deployers.push({
      name,
      algorithm: algorithm as SignatureAlgorithm,
      publicKey,
      ...(typeof kmsKeyArn === 'string' ? { kmsKeyArn } : {}),
      added: String(added),
    });
  });
  if (problems.length > 0) fail(problems);
  return { version: 1, deployers: deployers.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

/** The stored form: compact JSON, deployers sorted by name, fields in a fixed order. */
export function serializeDeployers(doc: DeployersDoc): string {
  const deployers = [...doc.deployers]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, algorithm, publicKey, kmsKeyArn, added }) =>
      kmsKeyArn === undefined
        ? { name, algorithm, publicKey, added }
        : { name, algorithm, publicKey, kmsKeyArn, added },
    );
  return JSON.stringify({ version: 1, deployers });
}
