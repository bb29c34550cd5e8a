import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { IndexSignature } from '@podmin/util-desired-state';
import type { Deployer, DeployersDoc } from './deployers';
import { signedStatement } from './statement';

/** The start of every refusal a node reports in health and its receipt (`podmin status` looks for it). */
export const UNTRUSTED_PREFIX = 'untrusted desired state';

/** What a node concludes about an index: trusted (with its generation), or why not. */
export type IndexVerdict =
  { trusted: true; generation: number; signer: string } | { trusted: false; reason: string };

/** What {@link verifyIndexSignature} checks. */
export interface VerifyInput {
  cluster: string;
  /** The canonical entries text (serializeIndex of the parsed entries). */
  entriesText: string;
  /** The signature the index carried; undefined when it carried none. */
  signature: IndexSignature | undefined;
  /** The trust list (non-empty: an empty list means enforcement is off, nothing to verify). */
  deployers: DeployersDoc;
  /** The highest generation this node applied; an index below it is a replay. */
  lastGeneration?: number;
}

// Parsed public keys by PEM: a node verifies at every index change, the list rarely changes.
const keys = new Map<string, KeyObject>();

function keyOf(deployer: Deployer): KeyObject {
  let key = keys.get(deployer.publicKey);
  if (key === undefined) {
    key = createPublicKey({ key: deployer.publicKey, format: 'pem' });
    if (keys.size > 64) keys.clear();
    keys.set(deployer.publicKey, key);
  }
  return key;
}

/**
 * Verifies an index against the trust list: signed, by a trusted deployer, over these entries
 * in this cluster, and not older than what the node applied. The reason names what failed in
 * words an operator can act on; it never includes key material.
 */
export function verifyIndexSignature(input: VerifyInput): IndexVerdict {
  const { signature, deployers } = input;
  const trusted = deployers.deployers.map((d) => d.name).join(', ');
  if (signature === undefined) {
    return {
      trusted: false,
      reason: `the index is unsigned, and this cluster runs only what a trusted deployer signed (${trusted})`,
    };
  }
  const deployer = deployers.deployers.find((d) => d.name === signature.signer);
  if (deployer === undefined) {
    return {
      trusted: false,
      reason: `the index is signed by "${signature.signer}", who is not a trusted deployer (trusted: ${trusted})`,
    };
  }
  if (deployer.algorithm !== signature.algorithm) {
    return {
      trusted: false,
      reason: `the index's ${signature.algorithm} signature cannot be "${deployer.name}"'s: that key is ${deployer.algorithm}`,
    };
  }
  const statement = signedStatement(input.cluster, signature.generation, input.entriesText);
  const digest = signature.algorithm === 'ed25519' ? null : 'sha256';
  let valid = false;
  try {
    valid = verify(digest, statement, keyOf(deployer), Buffer.from(signature.value, 'base64'));
  } catch {
    valid = false;
  }
  if (!valid) {
    return {
      trusted: false,
      reason: `the signature by "${deployer.name}" does not match this index (its entries were changed after signing, or it was signed for another cluster)`,
    };
  }
  if (input.lastGeneration !== undefined && signature.generation < input.lastGeneration) {
    return {
      trusted: false,
      reason: `the index is generation ${signature.generation}, older than generation ${input.lastGeneration} this node applied (an old index written back)`,
    };
  }
  return { trusted: true, generation: signature.generation, signer: deployer.name };
}
