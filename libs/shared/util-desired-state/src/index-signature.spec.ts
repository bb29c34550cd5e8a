import { ValidationError } from '@podmin/util-errors';
import {
  parseIndex,
  parseSignedIndex,
  podPayloadKey,
  serializeIndex,
  servicePayloadKey,
  type DesiredIndex,
} from './desired-index';
import { editCanonicalIndex } from './index-edit';
import {
  SIGNATURE_MEMBER,
  attachSignature,
  splitSignature,
  type IndexSignature,
} from './index-signature';

const signature: IndexSignature = {
  algorithm: 'ed25519',
  generation: 1767225600000,
  signer: 'ci-deployer',
  value: Buffer.alloc(64, 7).toString('base64'),
};
const index: DesiredIndex = {
  'edge/api': { pod: podPayloadKey('edge', 'api') },
  'web/front': {
    pod: podPayloadKey('web', 'front'),
    service: servicePayloadKey('shop', 'front', 'svc'),
  },
};
const entriesText = serializeIndex(index);
const member = (value: unknown): string => `  "${SIGNATURE_MEMBER}": ${JSON.stringify(value)}`;

/** The ValidationError `parseSignedIndex` throws for `text`, or a failure when it accepts it. */
function refusal(text: string): ValidationError {
  try {
    parseSignedIndex(text);
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('expected parseSignedIndex to refuse the index');
}

describe('attachSignature and splitSignature', () => {
  it('round-trips the entries text and the signature, the member last on one line', () => {
    const text = attachSignature(entriesText, signature);
    expect(text.startsWith(entriesText.slice(0, -3))).toBe(true);
    expect(text.endsWith(`,\n${member(signature)}\n}\n`)).toBe(true);
    expect(splitSignature(text)).toEqual({ entriesText, signature });
    expect(parseSignedIndex(text)).toEqual({ index, signature });
    expect(parseIndex(text)).toEqual(index);
  });

  it('signs an empty index', () => {
    const text = attachSignature('{}\n', signature);
    expect(text).toBe(`{\n${member(signature)}\n}\n`);
    expect(splitSignature(text)).toEqual({ entriesText: '{}\n', signature });
    expect(parseSignedIndex(text)).toEqual({ index: {}, signature });
  });

  it('returns unsigned text as it is, without a signature', () => {
    expect(splitSignature(entriesText)).toEqual({ entriesText });
    expect(splitSignature('{}\n')).toEqual({ entriesText: '{}\n' });
    expect(parseSignedIndex(entriesText)).toEqual({ index });
  });

  it('gives entries text the canonical edit accepts, so a signed index keeps the fast path', () => {
    const split = splitSignature(attachSignature(entriesText, signature));
    const entry = { pod: podPayloadKey('edge', 'db') };
    expect(editCanonicalIndex(split?.entriesText ?? '', 'edge/db', entry)?.text).toBe(
      serializeIndex({ ...index, 'edge/db': entry }),
    );
  });

  it('returns undefined for text not in the form writers put it, which the strict parse reads', () => {
    const signed = attachSignature(entriesText, signature);
    const { algorithm, generation, signer, value } = signature;
    const notWriterForm = [
      // Fields in another order.
      signed.replace(member(signature), member({ value, signer, generation, algorithm })),
      // The member pretty-printed over several lines.
      signed.replace(
        member(signature),
        `  "${SIGNATURE_MEMBER}": ${JSON.stringify(signature, null, 2).replace(/\n/g, '\n  ')}`,
      ),
      // Another tool's compact formatting.
      JSON.stringify({ ...index, [SIGNATURE_MEMBER]: signature }),
      // Not the last member.
      `{\n${member(signature)},\n${entriesText.slice(2)}`,
      // No final newline.
      signed.slice(0, -1),
    ];
    for (const text of notWriterForm) {
      expect(splitSignature(text)).toBeUndefined();
      expect(parseSignedIndex(text)).toEqual({ index, signature });
    }
  });

  it('returns undefined for a member the strict parse refuses', () => {
    const signed = attachSignature(entriesText, signature);
    const text = signed.replace(member(signature), member({ ...signature, generation: 0 }));
    expect(splitSignature(text)).toBeUndefined();
  });
});

describe('the signature member in the strict parse', () => {
  const signedWith = (value: unknown): string =>
    attachSignature(entriesText, signature).replace(member(signature), member(value));

  it('names the field of a member with an unknown field, a bad generation or bad base64', () => {
    const cases: Array<[unknown, string]> = [
      [{ ...signature, keyId: 'x' }, `${SIGNATURE_MEMBER}.keyId`],
      [{ ...signature, generation: 0 }, `${SIGNATURE_MEMBER}.generation`],
      [{ ...signature, generation: 2.5 }, `${SIGNATURE_MEMBER}.generation`],
      [{ ...signature, generation: '17' }, `${SIGNATURE_MEMBER}.generation`],
      [{ ...signature, value: 'not base64!' }, `${SIGNATURE_MEMBER}.value`],
      [{ ...signature, value: 'AAAA' }, `${SIGNATURE_MEMBER}.value`],
      [{ ...signature, algorithm: 'rsa-pss' }, `${SIGNATURE_MEMBER}.algorithm`],
      [{ ...signature, signer: 'Not A Label' }, `${SIGNATURE_MEMBER}.signer`],
      ['a string', SIGNATURE_MEMBER],
    ];
    for (const [value, field] of cases) {
      const err = refusal(signedWith(value));
      expect(err.code).toBe('INVALID_MANIFEST');
      expect(err.problems.map((p) => p.field)).toEqual([field]);
      expect(err.message).toContain(field);
      expect(() => parseIndex(signedWith(value))).toThrow(ValidationError);
    }
  });

  it('refuses a duplicate member, which the fast split leaves to the strict parse', () => {
    const other = { ...signature, generation: signature.generation + 1 };
    const text = attachSignature(attachSignature(entriesText, other).slice(0, -3) + '\n}\n', {
      ...signature,
    });
    expect(text.split(`"${SIGNATURE_MEMBER}"`)).toHaveLength(3);
    expect(splitSignature(text)).toBeUndefined();
    expect(refusal(text).message).toMatch(/duplicate/i);
  });
});
