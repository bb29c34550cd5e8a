import { PodminError, hasCode } from '@podmin/util-errors';
import {
  deploymentKey,
  parsePodKey,
  podPayloadKey,
  revisionOf,
  sameEntry,
  type HistoryAction,
  type IndexEntry,
} from '@podmin/util-desired-state';
import {
  entriesOf,
  parsePodBytes,
  readIndex,
  readPodPayload,
  readPayloads,
  type PayloadCache,
} from '@podmin/data-access-desired-state';
import { ensurePayload, recommitEntry, type CommitResult, type RecommitOptions } from './commit';
import { ImageIndexReads, pinPod } from './pin';
import type { DesiredStateStore } from './desired-state.ports';
import { readHistory, type HistoryReader, type StoredHistoryRecord } from './history';
import { limitRows } from './history-limit';
import { displayImages } from '@podmin/util-manifest';

/** One row of a deployment's history: a commit that made an entry current (or deleted it). */
export interface HistoryRow {
  /** The entry's revision; null for a delete. */
  revision: string | null;
  /** When it was committed; null when no record says (committed before the first recorded change). */
  time: string | null;
  /** The command that committed it; null when no record says. */
  action: HistoryAction | null;
  /** True for the row of the entry the index holds now. */
  current: boolean;
  /** The committed entry; null for a delete. */
  entry: IndexEntry | null;
}

/** A deployment's history, newest first, with what the index holds now. */
export interface DeploymentHistory {
  key: string;
  /** The index entry now; undefined when the deployment is deleted. */
  current: IndexEntry | undefined;
  rows: HistoryRow[];
}

/**
 * Reads one deployment's history, newest first. Each record names the entry a commit replaced
 * and what replaced it, so the rows are the replacements; an entry that no record shows being
 * committed (the first deploy, or one whose record could not be written) gets a row without a
 * time, and so does the current index entry when no record ends in it. NOT_FOUND when the
 * deployment has neither an index entry nor history.
 */
export async function deploymentHistory(
  store: HistoryReader,
  nodegroup: string,
  name: string,
): Promise<DeploymentHistory> {
  const key = deploymentKey(nodegroup, name);
  const [index, records] = await Promise.all([
    readIndex(store),
    readHistory(store, nodegroup, name),
  ]);
  const current = entriesOf(index)[key];
  if (current === undefined && records.length === 0) {
    throw new PodminError(
      'NOT_FOUND',
      `reading the history of ${key}: no such deployment in desired state, and no recorded history`,
      { hint: 'run `podmin list` to see committed deployments' },
    );
  }
  const untimed = (entry: IndexEntry): HistoryRow => ({
    revision: revisionOf(entry),
    time: null,
    action: null,
    current: false,
    entry,
  });
  const oldestFirst: HistoryRow[] = [];
  let last: IndexEntry | null | undefined;
  for (const { record } of commitOrder(records)) {
    if (last === undefined || last === null || !sameEntry(last, record.replaced))
      oldestFirst.push(untimed(record.replaced));
    const entry = record.replacement;
    oldestFirst.push({
      revision: entry === null ? null : revisionOf(entry),
      time: record.time,
      action: record.action,
      current: false,
      entry,
    });
    last = entry;
  }
  if (current !== undefined && (last === undefined || last === null || !sameEntry(last, current)))
    oldestFirst.push(untimed(current));
  const rows = oldestFirst.reverse();
  const top = rows[0];
  if (top && current !== undefined && top.entry && sameEntry(top.entry, current))
    top.current = true;
  return { key, current, rows };
}

/**
 * History records in the order their commits won the index's compare-and-swap. A record's time
 * is taken after its commit, so concurrent deploys can stamp their records out of commit order;
 * the links (each commit replaced what the one before it committed) are exact. From the record
 * whose replaced entry no other record committed, each next record is the earliest that
 * replaced what the last one committed; where no record does (a deploy after a delete, or a
 * record that could not be written), the chain resumes at the earliest record left.
 */
export function commitOrder(records: readonly StoredHistoryRecord[]): StoredHistoryRecord[] {
  const id = (entry: IndexEntry | null): string =>
    entry === null ? '' : `${entry.pod}\n${entry.service ?? ''}`;
  // Per replaced entry, the records (oldest first) that replaced it; per committed entry, how
  // many records not yet placed committed it.
  const byReplaced = new Map<string, number[]>();
  const committed = new Map<string, number>();
  records.forEach(({ record }, i) => {
    const from = id(record.replaced);
    const list = byReplaced.get(from);
    if (list === undefined) byReplaced.set(from, [i]);
    else list.push(i);
    const to = id(record.replacement);
    committed.set(to, (committed.get(to) ?? 0) + 1);
  });
  const placed = new Array<boolean>(records.length).fill(false);
  const next = new Map<string, number>();
  const successor = (entry: string): number => {
    const list = byReplaced.get(entry) ?? [];
    let at = next.get(entry) ?? 0;
    while (at < list.length && placed[list[at] as number]) at++;
    next.set(entry, at);
    return at < list.length ? (list[at] as number) : -1;
  };
  const chainStart = (): number => {
    for (let i = 0; i < records.length; i++) {
      const record = records[i]?.record;
      if (!placed[i] && record && (committed.get(id(record.replaced)) ?? 0) === 0) return i;
    }
    return placed.indexOf(false);
  };
  const out: StoredHistoryRecord[] = [];
  let last: string | undefined;
  while (out.length < records.length) {
    const link = last === undefined ? -1 : successor(last);
    const pick = link === -1 ? chainStart() : link;
    const stored = records[pick] as StoredHistoryRecord;
    placed[pick] = true;
    const to = id(stored.record.replacement);
    committed.set(to, (committed.get(to) ?? 1) - 1);
    out.push(stored);
    last = to;
  }
  return out;
}

/** A history row with the images of its Pod payload. */
export interface HistoryRowWithImages extends HistoryRow {
  /** Container images, init containers first (a pinned one as `tag@digest`, the tag from `podmin.dev/image-tags`); null when the Pod payload could not be read. */
  images: string[] | null;
}

/** A deployment's history with the images of each row. */
export interface DeploymentHistoryWithImages extends Omit<DeploymentHistory, 'rows'> {
  rows: HistoryRowWithImages[];
  /** Older rows left out by `limit`. */
  omitted: number;
}

/** Options of {@link historyWithImages}. */
export interface HistoryImageOptions {
  /** Verified payloads kept between commands (the CLI's `<cache>/payloads/sha512`). */
  cache?: PayloadCache;
  /** At most this many rows, newest first; 0 or undefined for all (see {@link limitRows}). */
  limit?: number;
}

/**
 * {@link deploymentHistory} with each row's images, read from the Pod payloads through the
 * shared verified-payload reader and cache (one read per distinct payload). A payload that
 * cannot be read or verified leaves `images` null and is warned about. With `limit`, only the
 * newest rows are kept, and only their payloads are read.
 */
export async function historyWithImages(
  store: HistoryReader,
  nodegroup: string,
  name: string,
  warn: (message: string) => void = () => undefined,
  options: HistoryImageOptions = {},
): Promise<DeploymentHistoryWithImages> {
  const full = await deploymentHistory(store, nodegroup, name);
  const { rows: kept, omitted } = limitRows(full.rows, options.limit ?? 0);
  const history = { ...full, rows: kept };
  const pods = history.rows.flatMap((r) => (r.entry ? [r.entry.pod] : []));
  const reads = await readPayloads(
    store,
    pods,
    options.cache === undefined ? {} : { cache: options.cache },
  );
  const images = new Map<string, string[] | null>();
  for (const pod of new Set(pods)) {
    const read = reads.get(pod);
    let failure: unknown = read?.ok === false ? read.error : undefined;
    if (read?.ok) {
      try {
        images.set(pod, displayImages(parsePodBytes(pod, read.body).pod));
        continue;
      } catch (err) {
        failure = err;
      }
    }
    images.set(pod, null);
    warn(
      `reading the Pod payload ${pod} of ${history.key}: ${failure instanceof Error ? failure.message : String(failure)}`,
    );
  }
  return {
    ...history,
    rows: history.rows.map((r) => ({
      ...r,
      images: r.entry ? (images.get(r.entry.pod) ?? null) : null,
    })),
    omitted,
  };
}

// Long enough that a prefix is meant, short enough to type; a full digest is accepted too.
const REVISION_PREFIX = /^[0-9a-f]{4,128}$/;

/** What {@link rollbackDeployment} should roll back to. */
export interface RollbackRequest {
  nodegroup: string;
  name: string;
  /** A revision or a unique prefix of one (4–128 hex); default: the revision before the current one. */
  to?: string;
}

/** Options of {@link rollbackDeployment}. */
export interface RollbackOptions extends RecommitOptions {
  /**
   * Pin a target whose Pod still names images by tag (committed before pinning, or with
   * `--no-pin`) by digest, writing the pinned payload as a new revision (default true; false
   * re-commits the target byte-identical). A target already by digest is always re-committed
   * byte-identical.
   */
  pin?: boolean;
}

/** What a rollback did. */
export interface RollbackResult extends CommitResult {
  /** The revision committed (the pinned payload's when the target was pinned). */
  revision: string;
  /** The revision rolled back to when it named images by tag and was pinned; else undefined. */
  pinnedFrom?: string;
  /** The revision it replaced; null when the deployment was deleted. */
  from: string | null;
}

/**
 * `podmin rollback`: resolves the target revision from the deployment's history (by default
 * the revision before the current one; for a deleted deployment, the one the delete removed),
 * then re-commits its entry through the same CAS as deploy, after verifying its payloads. An
 * unknown revision, an ambiguous prefix, a deployment without history or a malformed history
 * record fails before anything is written.
 */
export async function rollbackDeployment(
  store: DesiredStateStore & HistoryReader,
  request: RollbackRequest,
  options: RollbackOptions = {},
): Promise<RollbackResult> {
  const history = await deploymentHistory(store, request.nodegroup, request.name);
  const { key, current } = history;
  const doing = `rolling back ${key}`;
  // Newest entry per revision: two entries share a revision only when their Pods are the same
  // and their Services differ, and then the newer one is meant.
  const byRevision = new Map<string, IndexEntry>();
  for (const row of history.rows) {
    if (row.entry && row.revision && !byRevision.has(row.revision))
      byRevision.set(row.revision, row.entry);
  }
  const known = [...byRevision.keys()];
  let target: IndexEntry;
  if (request.to !== undefined) {
    const prefix = request.to.toLowerCase();
    if (!REVISION_PREFIX.test(prefix)) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: --to ${JSON.stringify(request.to)} is not a revision; allowed: 4 to 128 hex characters of a revision that \`podmin history\` shows`,
      );
    }
    const matches = known.filter((revision) =>
      parsePodKey((byRevision.get(revision) as IndexEntry).pod)?.digest.startsWith(prefix),
    );
    if (matches.length === 0) {
      throw new PodminError(
        'NOT_FOUND',
        `${doing}: no revision ${prefix} in its history; known revisions: ${known.join(', ')}`,
        { hint: `run \`podmin history ${request.name} -g ${request.nodegroup}\`` },
      );
    }
    if (matches.length > 1) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: revision prefix ${prefix} is ambiguous: it matches ${matches.join(', ')}; give more characters`,
      );
    }
    target = byRevision.get(matches[0] as string) as IndexEntry;
  } else {
    const earlier = history.rows.find(
      (row) => row.entry !== null && (current === undefined || !sameEntry(row.entry, current)),
    );
    if (!earlier?.entry) {
      throw new PodminError(
        'NOT_FOUND',
        `${doing}: its history holds no revision before the current one (${revisionOf(current as IndexEntry)})`,
        { hint: 'deploy another revision first; rollback only re-commits earlier ones' },
      );
    }
    target = earlier.entry;
  }
  const { pin, ...recommit } = options;
  const pinned = pin === false ? undefined : await pinnedEntry(store, target, doing);
  const result = await recommitEntry(store, key, pinned ?? target, recommit);
  return {
    ...result,
    revision: revisionOf(pinned ?? target),
    ...(pinned === undefined ? {} : { pinnedFrom: revisionOf(target) }),
    from: current === undefined ? null : revisionOf(current),
  };
}

/**
 * The target entry with its Pod payload pinned by digest (stored under its own key, so the
 * old payload stays as it was), or undefined when every image is already by digest. Reads the
 * target payload and one `index.json` per distinct repository, in parallel; an unpublished tag
 * fails naming the container field, with nothing written.
 */
async function pinnedEntry(
  store: DesiredStateStore,
  target: IndexEntry,
  doing: string,
): Promise<IndexEntry | undefined> {
  let pod: Record<string, unknown>;
  try {
    pod = (await readPodPayload(store, target.pod)).pod;
  } catch (err) {
    throw new PodminError(
      hasCode(err, 'OBJECT_NOT_FOUND') ? 'NOT_FOUND' : 'INVALID_MANIFEST',
      `${doing}: reading its payload ${target.pod} to pin its images`,
      {
        cause: err,
        hint: 'nothing was committed; deploy the manifest again to write fresh payloads',
      },
    );
  }
  const pinned = await pinPod(new ImageIndexReads(store), pod, doing);
  if (pinned === undefined) return undefined;
  const { nodegroup } = parsePodKey(target.pod) ?? {};
  if (nodegroup === undefined) {
    throw new PodminError('INTERNAL', `${doing}: ${target.pod} is not a Pod payload key`);
  }
  const podKey = podPayloadKey(nodegroup, pinned.podYaml);
  await ensurePayload(store, podKey, pinned.podYaml);
  return { ...target, pod: podKey };
}
