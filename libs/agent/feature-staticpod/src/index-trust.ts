import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { systemSecretName } from '@podmin/data-access-secrets';
import { hasCode, PodminError } from '@podmin/util-errors';
import { writeFileAtomic } from '@podmin/util-fs';
import { serializeIndex, type DesiredIndex, type IndexSignature } from '@podmin/util-desired-state';
import {
  DEPLOYERS_KEY,
  UNTRUSTED_PREFIX,
  parseDeployers,
  verifyIndexSignature,
  type DeployersDoc,
} from '@podmin/util-trust';
import { DegradedPassError } from './reconcile-outcome';
import type { TrustListReader } from './staticpod.ports';

/** The file under the node's state directory that holds the highest signed generation applied. */
export const GENERATION_FILE = 'desired-generation';

/** The start of every refusal a node reports in health and its receipt (util-trust's). */
export { UNTRUSTED_PREFIX };

/**
 * How old a trust list may be and still stand in when a fresh read fails (throttled or
 * unreachable Parameter Store). A deploy makes every node read the list within one poll, so a
 * large fleet meets SSM's request quota; a node that read the list moments ago verifies against
 * it rather than refusing, and a removed deployer stops counting within this time at worst.
 */
export const TRUST_LIST_FALLBACK_MS = 5 * 60_000;

/** What the node concluded of one index read. */
export type IndexTrustVerdict =
  /** No trust list for the cluster: enforcement is off, nothing was verified. */
  | { enforced: false }
  /** Signed by a trusted deployer, over these entries, not older than what the node applied. */
  | {
      enforced: true;
      trusted: true;
      generation: number;
      signer: string;
      /** Set when a fresh read failed and the last list read stood in: why, and its age. */
      staleList?: string;
    }
  /** Refused: why, in words an operator can act on. */
  | { enforced: true; trusted: false; reason: string };

/**
 * A node's check of each newly read index against the cluster's trust list (DESIGN.md, signed
 * desired state): the list is read from Parameter Store at every check (it changes rarely, but a
 * removed deployer must stop counting at once); without one, enforcement is off. An accepted
 * signature's generation is kept on disk, so an older index written back is refused even after
 * the agent restarts.
 */
export class IndexTrust {
  /** The highest generation applied; undefined until read from disk (or when none is kept). */
  private lastGeneration: number | undefined = undefined;
  private loaded = false;
  private readonly generationFile: string;
  private readonly trustListName: string;
  /** The trust list last parsed, its bytes and when it was read: parsing reads every key. */
  private parsed: { body: Buffer; doc: DeployersDoc; readAtMs: number } | undefined = undefined;

  constructor(
    private readonly trustList: TrustListReader | undefined,
    private readonly options: {
      cluster: string;
      /** The node's state directory (`<node root>/var/lib/podmin`). */
      stateDir: string;
      /** Clock in ms (tests). */
      nowMs?: () => number;
    },
  ) {
    this.generationFile = path.join(options.stateDir, GENERATION_FILE);
    this.trustListName = systemSecretName(options.cluster, DEPLOYERS_KEY);
  }

  /**
   * Verifies an index before anything is staged from it; on acceptance under enforcement the
   * generation is kept. Throws a {@link DegradedPassError} `untrusted desired state: <why>` when
   * the trust list or the kept generation cannot be read (then nothing can be trusted): the
   * node keeps everything it runs and asks again next poll.
   */
  async check(
    index: DesiredIndex,
    signature: IndexSignature | undefined,
  ): Promise<IndexTrustVerdict> {
    const { deployers, staleList } = await this.readTrustList();
    if (deployers === undefined) return { enforced: false };
    const lastGeneration = await this.readGeneration();
    const verdict = verifyIndexSignature({
      cluster: this.options.cluster,
      entriesText: serializeIndex(index),
      signature,
      deployers,
      ...(lastGeneration === undefined ? {} : { lastGeneration }),
    });
    if (!verdict.trusted) return { enforced: true, trusted: false, reason: verdict.reason };
    if (lastGeneration === undefined || verdict.generation > lastGeneration) {
      await writeFileAtomic(this.generationFile, `${verdict.generation}\n`);
      this.lastGeneration = verdict.generation;
    }
    return {
      enforced: true,
      trusted: true,
      generation: verdict.generation,
      signer: verdict.signer,
      ...(staleList === undefined ? {} : { staleList }),
    };
  }

  /**
   * The trust list (deployers undefined when the cluster has none, or an empty one: enforcement
   * off). A failed read falls back to the list last read, when it is at most
   * {@link TRUST_LIST_FALLBACK_MS} old, and says so in `staleList`.
   */
  private async readTrustList(): Promise<{ deployers?: DeployersDoc; staleList?: string }> {
    if (this.trustList === undefined) return {};
    const name = this.trustListName;
    const nowMs = this.options.nowMs?.() ?? Date.now();
    let body: Buffer;
    try {
      body = await this.trustList.get(name);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) {
        this.parsed = undefined;
        return {};
      }
      const why = err instanceof Error ? err.message : String(err);
      const last = this.parsed;
      if (last !== undefined && nowMs - last.readAtMs <= TRUST_LIST_FALLBACK_MS) {
        const age = Math.round((nowMs - last.readAtMs) / 1000);
        return {
          ...(last.doc.deployers.length === 0 ? {} : { deployers: last.doc }),
          staleList: `cannot read the trust list (${why}); verified against the one read ${age} s ago`,
        };
      }
      throw untrustedError(
        err instanceof PodminError ? err.code : 'SERVICE_UNAVAILABLE',
        `cannot read the trust list: ${why}`,
        err,
      );
    }
    let doc = this.parsed?.body.equals(body) === true ? this.parsed.doc : undefined;
    try {
      doc ??= parseDeployers(body, name);
    } catch (err) {
      // A list that was written wrong is refused, not stood in for: it is the operator's to fix.
      throw untrustedError(
        err instanceof PodminError ? err.code : 'INVALID_ARGUMENT',
        `cannot read the trust list: ${err instanceof Error ? err.message : String(err)}`,
        err,
      );
    }
    this.parsed = { body, doc, readAtMs: nowMs };
    return doc.deployers.length === 0 ? {} : { deployers: doc };
  }

  /** The generation kept on disk (read once per process); undefined when none was kept. */
  private async readGeneration(): Promise<number | undefined> {
    if (this.loaded) return this.lastGeneration;
    let text: string;
    try {
      text = await readFile(this.generationFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw untrustedError(
          'IO_ERROR',
          `cannot read the last applied generation from ${this.generationFile}: ${(err as Error).message}`,
          err,
        );
      }
      this.loaded = true;
      return undefined;
    }
    const generation = Number(text.trim());
    if (!/^\d+\n?$/.test(text) || !Number.isSafeInteger(generation)) {
      // Refuse rather than forget: a lost generation would let an old index be written back.
      throw untrustedError(
        'IO_ERROR',
        `${this.generationFile} does not hold a generation (a decimal integer); remove it to accept the current signed index`,
      );
    }
    this.lastGeneration = generation;
    this.loaded = true;
    return generation;
  }
}

/**
 * The pass error of an index the node cannot trust, `untrusted desired state: <reason>`: the
 * pass keeps the node's state and is retried every poll.
 */
export function untrustedError(
  code: PodminError['code'],
  reason: string,
  cause?: unknown,
): DegradedPassError {
  return new DegradedPassError(
    code,
    `${UNTRUSTED_PREFIX}: ${reason}`,
    cause === undefined ? {} : { cause },
  );
}
