import { INDEX_KEY, type DesiredIndex, type IndexSignature } from '@podmin/util-desired-state';
import {
  entriesOf,
  readIndex,
  readIndexIfChanged,
  versionOf,
  type IndexChange,
  type IndexRead,
  type IndexVersion,
} from '@podmin/data-access-desired-state';
import { untrustedError, type IndexTrust } from './index-trust';
import { DegradedPassError } from './reconcile-outcome';
import { hasPublishedManifests } from './static-pod-files';
import type { DesiredStateReader } from './staticpod.ports';

/** An index read the trust check refused: kept to re-verify while it stays the committed one. */
interface RefusedIndex {
  etag: string;
  index: DesiredIndex;
  signature: IndexSignature | undefined;
}

/**
 * Five poll intervals: a vanished index is far more often an operator's slip or a bucket
 * fault than an intended "delete everything", so the node keeps its Pods that long first.
 */
export const MISSING_INDEX_GRACE_MS = 25_000;

/**
 * The reconciler's view of the desired-state index: reads it (conditionally once a version is
 * known), verifies each newly read index against the cluster's trust list before it replaces
 * what the node follows, and applies the missing-index grace — an index that vanishes after
 * the node saw one counts as empty desired state only once it has stayed missing for the grace.
 */
export class DesiredIndexFollower {
  /** Index version the current state was read at; undefined until read (or after a failed fence). */
  version: IndexVersion | undefined = undefined;
  /** The entries of the index last read (empty while it is missing). */
  entries: DesiredIndex = {};
  /** Whether this node has seen a committed index (or holds Pods published from one). */
  private seenIndex: boolean | undefined = undefined;
  /** When the index was first found missing after the node had seen one (for the grace). */
  private missingSince: Date | undefined = undefined;
  /**
   * When the index the node had seen vanished; kept after the grace (when the node has emptied
   * itself) until an index is read again, so the node never looks healthy without desired state.
   */
  private indexGoneSince: Date | undefined = undefined;
  /**
   * The committed index the trust check refused, while it stays committed: the next poll reads
   * conditionally against it and re-verifies it (the trust list may have gained its signer).
   */
  private refused: RefusedIndex | undefined = undefined;
  /** The refusal (or trust fault) last logged, so each cause is logged once. */
  private loggedRefusal: string | undefined = undefined;

  constructor(
    private readonly store: DesiredStateReader,
    private readonly options: {
      nodegroup: string;
      /** The static-Pod directory: Pods there mean the node has seen an index before. */
      manifests: string;
      missingIndexGraceMs?: number;
      /** Verifies each newly read index; without it every index is followed unverified. */
      trust?: Pick<IndexTrust, 'check'>;
      /** Logs each refusal's cause once, and the first trusted index after refusals. */
      log?: (message: string, fields: Record<string, unknown>) => void;
    },
    private readonly now: () => Date,
  ) {}

  /** Forgets the version read, so the next read is unconditional (after a failed fence). */
  forget(): void {
    this.version = undefined;
  }

  /**
   * `desired state: index missing since <time>` while the index this node had seen stays
   * missing (within the grace, and after it when the node has removed its Pods); else undefined.
   */
  missing(): string | undefined {
    const since = this.indexGoneSince;
    if (since === undefined) return undefined;
    const graceMs = this.options.missingIndexGraceMs ?? MISSING_INDEX_GRACE_MS;
    const emptied = this.seenIndex === false;
    return (
      `desired state: index missing since ${since.toISOString()} (${INDEX_KEY}); ` +
      (emptied
        ? `counted as empty desired state after ${Math.round(graceMs / 1000)} s, so this node runs no Pods of NodeGroup ${this.options.nodegroup}`
        : `keeping every Pod until it has been missing for ${Math.round(graceMs / 1000)} s`)
    );
  }

  /** The ETag health reports: '' for a missing index, null before the first read. */
  etag(): string | null {
    return this.version === undefined ? null : (this.version ?? '');
  }

  /**
   * Reads the index (conditionally once a version is known); true when desired state changed.
   * An index the trust check refuses changes nothing here: the pass fails with its reason, and
   * the node keeps following (and publishing) what it had.
   */
  async read(signal: AbortSignal): Promise<{ changed: boolean; warning?: string }> {
    const seen = this.version;
    // While an index is refused, ask whether it is still the committed one.
    const against = this.refused?.etag ?? seen;
    const change: IndexChange =
      typeof against === 'string'
        ? await readIndexIfChanged(this.store, against, { signal })
        : await readIndex(this.store, { signal });
    const refused = this.refused;
    let read: IndexRead;
    if (change.status !== 'unchanged') read = change;
    else if (refused === undefined) {
      this.missingSince = undefined;
      this.indexGoneSince = undefined;
      return { changed: false };
    } else read = presentRead(refused);
    let warning: string | undefined;
    if (read.status === 'absent') {
      this.refused = undefined;
      warning = await this.absentIndex();
    } else {
      await this.verify(read);
      this.seenIndex = true;
      this.missingSince = undefined;
      this.indexGoneSince = undefined;
    }
    // A missing index means empty desired state; still missing is no change.
    const version = versionOf(read);
    const changed = !(seen === null && version === null);
    this.entries = entriesOf(read);
    this.version = version;
    return warning === undefined ? { changed } : { changed, warning };
  }

  /**
   * Lets `read` replace what the node follows only when the trust check accepts it; else
   * remembers it as refused and throws the refusal (each cause logged once).
   */
  private async verify(read: Extract<IndexRead, { status: 'present' }>): Promise<void> {
    if (this.options.trust === undefined) return;
    let failure: DegradedPassError;
    try {
      const verdict = await this.options.trust.check(read.index, read.signature);
      if (!verdict.enforced || verdict.trusted) {
        if (verdict.enforced && verdict.staleList !== undefined) {
          this.options.log?.('trust desired state with the last trust list read', {
            indexEtag: read.etag,
            warning: verdict.staleList,
          });
        }
        if (this.loggedRefusal !== undefined && verdict.enforced) {
          this.options.log?.('trust desired state', {
            indexEtag: read.etag,
            signer: verdict.signer,
            generation: verdict.generation,
          });
        }
        this.refused = undefined;
        this.loggedRefusal = undefined;
        return;
      }
      // Remembered, so the next poll reads conditionally against it and verifies it again.
      this.refused = { etag: read.etag, index: read.index, signature: read.signature };
      failure = untrustedError('ACCESS_DENIED', verdict.reason);
    } catch (err) {
      // A trust fault (list or generation unreadable) is not a verdict on this index: the next
      // poll reads the index again and retries the whole check.
      this.refused = undefined;
      if (!(err instanceof DegradedPassError)) throw err;
      failure = err;
    }
    if (failure.message !== this.loggedRefusal) {
      this.options.log?.('refuse desired state', {
        error: failure.message,
        indexEtag: read.etag,
        ...(read.signature === undefined
          ? {}
          : { signer: read.signature.signer, generation: read.signature.generation }),
        effect: 'keeping every published Pod, identity and secret',
      });
    }
    this.loggedRefusal = failure.message;
    throw failure;
  }

  /**
   * The spec's "missing index means empty desired state" holds for a cluster that never had one.
   * An index that vanishes after the node saw one (in this process, or as Pods it published
   * before a restart) counts as empty only once it has stayed missing for the grace period;
   * until then the pass keeps everything and fails loudly. Returns the warning to log when the
   * grace has run out.
   */
  private async absentIndex(): Promise<string | undefined> {
    this.seenIndex ??= await hasPublishedManifests(this.options.manifests);
    if (!this.seenIndex) return undefined;
    const graceMs = this.options.missingIndexGraceMs ?? MISSING_INDEX_GRACE_MS;
    const now = this.now();
    this.missingSince ??= now;
    this.indexGoneSince ??= now;
    const missingMs = now.getTime() - this.missingSince.getTime();
    if (missingMs < graceMs) {
      throw new DegradedPassError(
        'SERVICE_UNAVAILABLE',
        `reading the desired-state index: ${INDEX_KEY} disappeared ${Math.round(missingMs / 1000)} s ago ` +
          `after this node had seen one; keeping every published Pod, identity and secret until it ` +
          `has been missing for ${Math.round(graceMs / 1000)} s, then it counts as empty desired state`,
      );
    }
    this.seenIndex = false;
    this.missingSince = undefined;
    return `${INDEX_KEY} has been missing for ${Math.round(missingMs / 1000)} s: counting it as empty desired state and removing every static Pod of NodeGroup ${this.options.nodegroup}`;
  }
}

/** The refused index as a present read, to verify it again. */
function presentRead(refused: RefusedIndex): Extract<IndexRead, { status: 'present' }> {
  return refused.signature === undefined
    ? { status: 'present', index: refused.index, etag: refused.etag }
    : {
        status: 'present',
        index: refused.index,
        etag: refused.etag,
        signature: refused.signature,
      };
}
