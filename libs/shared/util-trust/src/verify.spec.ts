import { createHash, generateKeyPairSync } from 'node:crypto';
import {
  podPayloadKey,
  serializeIndex,
  splitSignature,
  type IndexSignature,
} from '@podmin/util-desired-state';
import type { Deployer, DeployersDoc } from './deployers';
import { generateSigningKey, localSigner, publicKeyOfPrivate, type IndexSigner } from './keys';
import { nextGeneration, signIndexText } from './sign-index';
import { signedStatement } from './statement';
import { verifyIndexSignature, type IndexVerdict } from './verify';

const NOW = Date.UTC(2026, 11, 3, 20, 0, 0);
const entriesText = serializeIndex({
  'edge/api': { pod: podPayloadKey('edge', 'api v1') },
  'web/front': { pod: podPayloadKey('web', 'front v1') },
});

/** A local signer and the trust-list entry of its public key. */
function deployer(name: string, privatePem: string): { signer: IndexSigner; entry: Deployer } {
  const info = publicKeyOfPrivate(privatePem, 'key');
  return {
    signer: localSigner(name, privatePem, 'key'),
    entry: { name, algorithm: info.algorithm, publicKey: info.pem, added: '2026-12-01T00:00:00Z' },
  };
}

function p256PrivatePem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

const alice = deployer('alice', generateSigningKey().privatePem);
const ci = deployer('ci', p256PrivatePem());
const trustList = (...entries: Deployer[]): DeployersDoc => ({ version: 1, deployers: entries });

/** Signs `entriesText` for `cluster` and returns what a node reads back from the stored text. */
async function signed(
  signer: IndexSigner,
  text = entriesText,
  previous?: IndexSignature,
  cluster = 'demo',
): Promise<{ entriesText: string; signature: IndexSignature }> {
  const written = await signIndexText(signer, cluster, text, previous, NOW);
  const split = splitSignature(written.text);
  if (split?.signature === undefined) throw new Error('the signed text did not split');
  expect(split.signature).toEqual(written.signature);
  return { entriesText: split.entriesText, signature: split.signature };
}

function reasonOf(verdict: IndexVerdict): string {
  if (verdict.trusted) throw new Error('expected the index to be refused');
  return verdict.reason;
}

describe('signing and verifying an index', () => {
  it('round-trips with a local Ed25519 key and with an ECDSA P-256 key (KMS key spec)', async () => {
    for (const { signer, entry } of [alice, ci]) {
      const read = await signed(signer);
      expect(read.entriesText).toBe(entriesText);
      expect(read.signature).toMatchObject({ signer: entry.name, generation: NOW });
      expect(read.signature.algorithm).toBe(entry === ci.entry ? 'ecdsa-p256-sha256' : 'ed25519');
      expect(
        verifyIndexSignature({
          cluster: 'demo',
          ...read,
          deployers: trustList(alice.entry, ci.entry),
        }),
      ).toEqual({ trusted: true, generation: NOW, signer: entry.name });
    }
  });

  it('refuses entries edited or added after signing, and a signature for another cluster', async () => {
    const read = await signed(alice.signer);
    const deployers = trustList(alice.entry);
    const edited = read.entriesText.replace(
      podPayloadKey('edge', 'api v1'),
      podPayloadKey('edge', 'evil'),
    );
    const added = serializeIndex({
      'edge/api': { pod: podPayloadKey('edge', 'api v1') },
      'edge/miner': { pod: podPayloadKey('edge', 'miner') },
      'web/front': { pod: podPayloadKey('web', 'front v1') },
    });
    for (const text of [edited, added]) {
      expect(
        reasonOf(
          verifyIndexSignature({
            cluster: 'demo',
            entriesText: text,
            signature: read.signature,
            deployers,
          }),
        ),
      ).toContain('does not match this index');
    }
    expect(reasonOf(verifyIndexSignature({ cluster: 'prod', ...read, deployers }))).toContain(
      'does not match this index',
    );
    const forged = { ...read.signature, value: Buffer.alloc(64).toString('base64') };
    expect(
      reasonOf(
        verifyIndexSignature({ cluster: 'demo', entriesText, signature: forged, deployers }),
      ),
    ).toContain('does not match this index');
  });

  it('refuses an unsigned index, an unknown or removed signer, and an algorithm mismatch', async () => {
    const deployers = trustList(alice.entry);
    expect(
      reasonOf(
        verifyIndexSignature({ cluster: 'demo', entriesText, signature: undefined, deployers }),
      ),
    ).toBe(
      'the index is unsigned, and this cluster runs only what a trusted deployer signed (alice)',
    );
    const byCi = await signed(ci.signer);
    expect(reasonOf(verifyIndexSignature({ cluster: 'demo', ...byCi, deployers }))).toBe(
      'the index is signed by "ci", who is not a trusted deployer (trusted: alice)',
    );
    // A P-256 signature naming alice, whose trusted key is Ed25519.
    const impostor = localSigner('alice', p256PrivatePem(), 'key');
    const claimed = await signed(impostor);
    expect(reasonOf(verifyIndexSignature({ cluster: 'demo', ...claimed, deployers }))).toContain(
      `cannot be "alice"'s: that key is ed25519`,
    );
    // Same algorithm, another key under a trusted name.
    const other = await signed(localSigner('alice', generateSigningKey().privatePem, 'key'));
    expect(reasonOf(verifyIndexSignature({ cluster: 'demo', ...other, deployers }))).toContain(
      'does not match this index',
    );
  });

  it('refuses a generation below the last one applied (replay), accepts the same one again', async () => {
    const first = await signed(alice.signer);
    const second = await signed(alice.signer, entriesText, first.signature);
    expect(second.signature.generation).toBe(first.signature.generation + 1);
    const deployers = trustList(alice.entry);
    const last = second.signature.generation;
    expect(
      reasonOf(
        verifyIndexSignature({ cluster: 'demo', ...first, deployers, lastGeneration: last }),
      ),
    ).toBe(
      `the index is generation ${first.signature.generation}, older than generation ${last} this node applied (an old index written back)`,
    );
    expect(
      verifyIndexSignature({ cluster: 'demo', ...second, deployers, lastGeneration: last }),
    ).toMatchObject({ trusted: true, generation: last });
  });
});

describe('generations and the signed statement', () => {
  it('grows past the previous generation and never falls behind the clock', () => {
    const previous = (generation: number): IndexSignature => ({
      algorithm: 'ed25519',
      generation,
      signer: 'alice',
      value: 'A'.repeat(88),
    });
    expect(nextGeneration(undefined, NOW)).toBe(NOW);
    expect(nextGeneration(previous(5), NOW)).toBe(NOW);
    expect(nextGeneration(previous(NOW + 10), NOW)).toBe(NOW + 11);
    expect(nextGeneration(undefined, NOW + 0.7)).toBe(NOW);
  });

  it('names the cluster, the generation and the SHA-512 of the entries', () => {
    const digest = createHash('sha512').update('{}\n').digest('hex');
    expect(signedStatement('demo', 42, '{}\n').toString('utf8')).toBe(
      `podmin desired-state v1\ncluster demo\ngeneration 42\nsha512 ${digest}\n`,
    );
  });
});
