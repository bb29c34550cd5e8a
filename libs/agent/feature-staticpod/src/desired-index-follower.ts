import { INDEX_KEY, type DesiredIndex } from '@podmin/util-desired-state';
import {
  entriesOf,
  readIndex,
  readIndexIfChanged,
  versionOf,
  type IndexChange,
  type IndexVersion,
} from '@podmin/data-access-desired-state';
import { DegradedPassError } from './reconcile-outcome';
import { hasPublishedManifests } from './static-pod-files';
import type { DesiredStateReader } from './staticpod.ports';

/**
 * Five poll intervals: a vanished index is far more often an operator's slip or a bucket
 * fault than an intended "delete everything", so the node keeps its Pods that long first.
 */
export const MISSING_INDEX_GRACE_MS = 25_000;

/**
 * The reconciler's view of the desired-state index: reads it (conditionally once a version is
 * known), and applies the missing-index grace — an index that vanishes after the node saw one
 * counts as empty desired state only once it has stayed missing for the grace.
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

  constructor(
    private readonly store: DesiredStateReader,
    private readonly options: {
      nodegroup: string;
      /** The static-Pod directory: Pods there mean the node has seen an index before. */
      manifests: string;
      missingIndexGraceMs?: number;
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

  /** Reads the index (conditionally once a version is known); true when desired state changed. */
  async read(signal: AbortSignal): Promise<{ changed: boolean; warning?: string }> {
    const seen = this.version;
    const read: IndexChange =
      typeof seen === 'string'
        ? await readIndexIfChanged(this.store, seen, { signal })
        : await readIndex(this.store, { signal });
    if (read.status === 'unchanged') {
      this.missingSince = undefined;
      this.indexGoneSince = undefined;
      return { changed: false };
    }
    let warning: string | undefined;
    if (read.status === 'absent') {
      warning = await this.absentIndex();
    } else {
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
