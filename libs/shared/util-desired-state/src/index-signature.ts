import type { FieldProblem } from '@podmin/util-errors';
import { isDnsLabel } from '@podmin/util-names';

/**
 * The index member that carries a trusted deployer's signature. Its name holds a dot, so it can
 * never be a `<nodegroup>/<deployment>` key (two DNS-1123 labels); writers put it last.
 */
export const SIGNATURE_MEMBER = 'podmin.dev/signature';

/** How a deployer's key signs: a local Ed25519 key, or an AWS KMS ECC_NIST_P256 key. */
export const SIGNATURE_ALGORITHMS = ['ed25519', 'ecdsa-p256-sha256'] as const;

/** One of {@link SIGNATURE_ALGORITHMS}. */
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];

/** A deployer's signature over the canonical index and its generation (see util-trust). */
export interface IndexSignature {
  algorithm: SignatureAlgorithm;
  /** Grows with every signed write; nodes refuse one lower than the last they applied. */
  generation: number;
  /** The trusted deployer's name, as `podmin trust add` recorded it. */
  signer: string;
  /** The signature, base64. */
  value: string;
}

const FIELDS = ['algorithm', 'generation', 'signer', 'value'] as const;
const BASE64 = /^[A-Za-z0-9+/]{40,400}={0,2}$/;

/** Problems of a signature member's value, each naming its field; empty when it is valid. */
export function signatureProblems(value: unknown): FieldProblem[] {
  const at = (field: string): string => `${SIGNATURE_MEMBER}.${field}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: SIGNATURE_MEMBER, message: `must be an object with ${FIELDS.join(', ')}` }];
  }
  const raw = value as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const field of Object.keys(raw)) {
    if (!(FIELDS as readonly string[]).includes(field)) {
      problems.push({ field: at(field), message: `unknown field; allowed: ${FIELDS.join(', ')}` });
    }
  }
  if (!(SIGNATURE_ALGORITHMS as readonly unknown[]).includes(raw['algorithm'])) {
    problems.push({
      field: at('algorithm'),
      message: `must be one of ${SIGNATURE_ALGORITHMS.join(', ')}`,
    });
  }
  const generation = raw['generation'];
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 1) {
    problems.push({ field: at('generation'), message: 'must be a positive integer' });
  }
  if (typeof raw['signer'] !== 'string' || !isDnsLabel(raw['signer'])) {
    problems.push({ field: at('signer'), message: 'must be a deployer name (a DNS-1123 label)' });
  }
  if (typeof raw['value'] !== 'string' || !BASE64.test(raw['value'])) {
    problems.push({ field: at('value'), message: 'must be a base64 signature' });
  }
  return problems;
}

/** The member's one line as writers put it, without separator: fields in a fixed order. */
function renderMember(signature: IndexSignature): string {
  const { algorithm, generation, signer, value } = signature;
  return `  ${JSON.stringify(SIGNATURE_MEMBER)}: ${JSON.stringify({ algorithm, generation, signer, value })}`;
}

const EMPTY = '{}\n';
const TAIL = '\n}\n';
const QUOTED_MEMBER = JSON.stringify(SIGNATURE_MEMBER);
const MEMBER_HEAD = `  ${QUOTED_MEMBER}: `;

/**
 * Canonical index text (serializeIndex's bytes) with the signature appended as its last member.
 * `splitSignature` of the result gives back exactly `entriesText` and `signature`.
 */
export function attachSignature(entriesText: string, signature: IndexSignature): string {
  const member = renderMember(signature);
  if (entriesText === EMPTY) return `{\n${member}${TAIL}`;
  return `${entriesText.slice(0, entriesText.length - TAIL.length)},\n${member}${TAIL}`;
}

/** Index text split into the canonical entries text and the signature it carried (if any). */
export interface SplitIndexText {
  entriesText: string;
  signature?: IndexSignature;
}

/**
 * Undoes {@link attachSignature} without parsing the entries: text with no signature member is
 * returned as it is. Returns undefined when the member is there but not in the form writers
 * put it (then parse the whole index: parseSignedIndex). The entries text is not checked here.
 */
export function splitSignature(text: string): SplitIndexText | undefined {
  const at = text.lastIndexOf(`\n${MEMBER_HEAD}`);
  // The member's name anywhere else (a second member, another tool's formatting): parse it all.
  const first = text.indexOf(QUOTED_MEMBER);
  if (at === -1) return first === -1 ? { entriesText: text } : undefined;
  if (first !== at + 3) return undefined;
  if (!text.endsWith(TAIL)) return undefined;
  const line = text.slice(at + 1 + MEMBER_HEAD.length, text.length - TAIL.length);
  if (line.includes('\n')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (signatureProblems(value).length > 0) return undefined;
  const signature = value as IndexSignature;
  if (renderMember(signature) !== `${MEMBER_HEAD}${line}`) return undefined;
  const head = text.slice(0, at);
  let entriesText: string;
  if (head === '{') entriesText = EMPTY;
  else if (head.endsWith(',')) entriesText = `${head.slice(0, -1)}${TAIL}`;
  else return undefined;
  return { entriesText, signature };
}
