import { attachSignature, type IndexSignature } from '@podmin/util-desired-state';
import type { IndexSigner } from './keys';
import { signedStatement } from './statement';

/**
 * The generation of the next signed write after `previous`: above it, and at least the current
 * time in milliseconds, so a chain restarted after trust was turned off and on again still
 * outgrows what nodes applied before.
 */
export function nextGeneration(previous: IndexSignature | undefined, nowMs: number): number {
  return Math.max((previous?.generation ?? 0) + 1, Math.floor(nowMs));
}

/**
 * Signs canonical entries text as the write after `previous` and returns the index text to
 * store (the entries with the signature member last) and the signature.
 */
export async function signIndexText(
  signer: IndexSigner,
  cluster: string,
  entriesText: string,
  previous: IndexSignature | undefined,
  nowMs: number = Date.now(),
): Promise<{ text: string; signature: IndexSignature }> {
  const generation = nextGeneration(previous, nowMs);
  const value = await signer.sign(signedStatement(cluster, generation, entriesText));
  const signature: IndexSignature = {
    algorithm: signer.algorithm,
    generation,
    signer: signer.signer,
    value: value.toString('base64'),
  };
  return { text: attachSignature(entriesText, signature), signature };
}
