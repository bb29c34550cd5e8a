import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@podmin/util-fs';

/** What `list` shows of one Pod payload. */
export interface PodSummary {
  namespace: string;
  origin: string | null;
}

/**
 * Summaries of verified Pod payloads by their SHA-512 digest, kept between `list` runs. A
 * payload is content-addressed, so its summary never changes: a summary read here stands for
 * the verified bytes it was made from, as the payload cache's bytes do.
 */
export interface SummaryCache {
  /** The summaries known, by digest (empty when there is no usable cache). */
  load(): Promise<Map<string, PodSummary>>;
  /** Replaces the cache with `summaries` (callers pass only the digests still in use). */
  save(summaries: ReadonlyMap<string, PodSummary>): Promise<void>;
}

const FORMAT = 'podmin-list-summaries/v1';
const DIGEST = /^[0-9a-f]{128}$/;

/**
 * A {@link SummaryCache} in one JSON file, replaced atomically (0600). A file that is missing,
 * unreadable or not in this format counts as empty: the summaries are rebuilt from payloads.
 * Concurrent `list` runs may each replace it; the last one wins and nothing else is lost, since
 * any summary can be rebuilt.
 */
export class FileSummaryCache implements SummaryCache {
  constructor(private readonly file: string) {}

  async load(): Promise<Map<string, PodSummary>> {
    const out = new Map<string, PodSummary>();
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.file, 'utf8'));
    } catch {
      return out;
    }
    if (typeof parsed !== 'object' || parsed === null) return out;
    const { format, summaries } = parsed as { format?: unknown; summaries?: unknown };
    if (format !== FORMAT || typeof summaries !== 'object' || summaries === null) return out;
    for (const [digest, value] of Object.entries(summaries)) {
      const summary = asSummary(value);
      if (DIGEST.test(digest) && summary !== undefined) out.set(digest, summary);
    }
    return out;
  }

  async save(summaries: ReadonlyMap<string, PodSummary>): Promise<void> {
    const body = { format: FORMAT, summaries: Object.fromEntries(summaries) };
    await writeFileAtomic(this.file, JSON.stringify(body), { mode: 0o600 });
  }
}

/** The CLI's summary cache, `<podmin cache>/list/summaries.json`. */
export function summaryCacheIn(cacheDir: string): SummaryCache {
  return new FileSummaryCache(path.join(cacheDir, 'list', 'summaries.json'));
}

function asSummary(value: unknown): PodSummary | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { namespace, origin } = value as { namespace?: unknown; origin?: unknown };
  if (typeof namespace !== 'string' || (origin !== null && typeof origin !== 'string')) {
    return undefined;
  }
  return { namespace, origin };
}
