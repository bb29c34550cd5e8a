import { createHash } from 'node:crypto';

/** The first line of every signed statement: what is signed and in which version of the form. */
export const STATEMENT_HEADER = 'podmin desired-state v1';

/**
 * The bytes a deployer signs for one index write: the cluster (so an index cannot be replayed
 * into another cluster), the generation, and the SHA-512 of the canonical entries text
 * (serializeIndex's bytes, which name every entry and every payload digest). Short and of fixed
 * form, so an AWS KMS key signs it as a RAW message whatever the size of the index.
 */
export function signedStatement(cluster: string, generation: number, entriesText: string): Buffer {
  const digest = createHash('sha512').update(entriesText).digest('hex');
  return Buffer.from(
    `${STATEMENT_HEADER}\ncluster ${cluster}\ngeneration ${generation}\nsha512 ${digest}\n`,
    'utf8',
  );
}
