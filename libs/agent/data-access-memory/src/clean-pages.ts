import fs from 'node:fs';
import type Koffi from 'koffi';

/*
 * Every agent process maps the same Node.js binary, and its resident set counts each page of it
 * the process has touched: about 38 MiB each, mostly code and data run once at start-up (module
 * loading, the bootstrap, the Nest application being built). Those pages are clean copies of the
 * file, shared through the page cache, and an idle process does not touch most of them again.
 * Dropping this process's mapping of them (madvise MADV_DONTNEED on a private, read-only,
 * file-backed region without private copies) gives them back: a page touched later faults in from
 * the page cache again, with the same bytes, as a minor fault. MADV_PAGEOUT would not do: the
 * kernel skips pages that other processes map too, which all of these are. Writable regions and
 * regions holding private copies (RELRO after relocation) are never touched, since dropping
 * those would lose their contents.
 */

/** One mapping of /proc/<pid>/smaps. */
export interface MappedRegion {
  readonly start: bigint;
  readonly end: bigint;
  /** `rwxp`-style permissions. */
  readonly perms: string;
  /** The mapped file, or a pseudo-name (`[heap]`), or empty for anonymous memory. */
  readonly path: string;
  /** Resident pages of the region, in KiB. */
  readonly rssKiB: number;
  /** Private copies (written, or anonymous) inside the region, in KiB. */
  readonly anonymousKiB: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) ([-rwxps]{4}) [0-9a-f]+ [0-9a-f]+:[0-9a-f]+ \d+\s*(.*)$/;
const FIELD = /^(Rss|Anonymous):\s+(\d+) kB$/;

/** Parses the text of /proc/<pid>/smaps into its regions. */
export function parseSmaps(text: string): MappedRegion[] {
  const regions: Array<{ -readonly [K in keyof MappedRegion]: MappedRegion[K] }> = [];
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line);
    if (header) {
      regions.push({
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        perms: header[3] as string,
        path: header[4] as string,
        rssKiB: 0,
        anonymousKiB: 0,
      });
      continue;
    }
    const field = FIELD.exec(line);
    const current = regions.at(-1);
    if (!field || !current) continue;
    if (field[1] === 'Rss') current.rssKiB = Number(field[2]);
    else current.anonymousKiB = Number(field[2]);
  }
  return regions;
}

/**
 * The regions whose resident pages are all clean copies of a file: file-backed (an absolute
 * path, not a deleted file), private, not writable, and without a single private copy.
 */
export function cleanFileRegions(regions: readonly MappedRegion[]): MappedRegion[] {
  return regions.filter(
    (r) =>
      r.path.startsWith('/') &&
      !r.path.endsWith(' (deleted)') &&
      r.perms[1] === '-' &&
      r.perms[3] === 'p' &&
      r.anonymousKiB === 0 &&
      r.rssKiB > 0,
  );
}

/** madvise(2) as the release needs it. */
export type Madvise = (start: bigint, length: number) => number;

/** What one release gave back. */
export interface CleanPageRelease {
  readonly regions: number;
  /** Resident KiB of the regions released (what this process stopped holding). */
  readonly releasedKiB: number;
  /** Regions madvise refused (left as they were). */
  readonly refused: number;
}

const MADV_DONTNEED = 4; // the same on every Linux architecture

let bound: Madvise | undefined;

/** libc's madvise through koffi, bound on first use. */
export function libcMadvise(): Madvise {
  if (bound) return bound;
  // Required here, not imported: a process that never releases pages never loads the FFI.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const koffi = require('koffi') as typeof Koffi;
  const madvise = koffi
    .load('libc.so.6')
    .func('int madvise(uintptr_t addr, size_t length, int advice)') as (
    addr: bigint,
    length: number,
    advice: number,
  ) => number;
  bound = (start, length) => madvise(start, length, MADV_DONTNEED);
  return bound;
}

/** Drops this process's resident clean file pages (see the comment at the top of this file). */
export function releaseCleanFilePages(
  madvise: Madvise = libcMadvise(),
  smaps: () => string = () => fs.readFileSync('/proc/self/smaps', 'utf8'),
): CleanPageRelease {
  let regions = 0;
  let releasedKiB = 0;
  let refused = 0;
  for (const region of cleanFileRegions(parseSmaps(smaps()))) {
    if (madvise(region.start, Number(region.end - region.start)) === 0) {
      regions++;
      releasedKiB += region.rssKiB;
    } else refused++;
  }
  return { regions, releasedKiB, refused };
}

/** When releases happen. */
export interface CleanPageSchedule {
  /** After start, once start-up is over (default 15 s). */
  readonly firstMs?: number;
  /** Then this often, giving back what rare work touched since (default 10 min). */
  readonly everyMs?: number;
}

/** A logger's event method, as the release reports itself. */
export type ReleaseLog = (
  level: 'info' | 'warn',
  msg: string,
  fields: Record<string, unknown>,
) => void;

/**
 * Releases clean file pages once start-up is over and then periodically, on Linux; the timers
 * never keep the process alive. A failure (no FFI, no /proc) is logged once and ends the schedule.
 * Returns a function that cancels it.
 */
export function scheduleCleanPageRelease(
  log: ReleaseLog,
  schedule: CleanPageSchedule = {},
  release: () => CleanPageRelease = () => releaseCleanFilePages(),
): () => void {
  if (process.platform !== 'linux') return () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let first = true;
  const run = (): void => {
    try {
      const result = release();
      // The first release is the one worth a line; later ones are routine.
      if (first) log('info', 'release start-up pages', { ...result });
      first = false;
      timer = setTimeout(run, schedule.everyMs ?? 600_000).unref();
    } catch (err) {
      log('warn', 'release start-up pages failed', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  };
  timer = setTimeout(run, schedule.firstMs ?? 15_000).unref();
  return () => clearTimeout(timer);
}
