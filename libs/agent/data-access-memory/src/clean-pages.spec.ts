import {
  cleanFileRegions,
  parseSmaps,
  releaseCleanFilePages,
  scheduleCleanPageRelease,
  type CleanPageRelease,
} from './clean-pages';

// Shaped as /proc/<pid>/smaps prints it (fields trimmed to the ones read, plus one ignored).
const SMAPS = `00400000-00c00000 r--p 00000000 08:01 1234   /usr/bin/node
Size:               8192 kB
Rss:                5948 kB
Anonymous:             0 kB
00c00000-02000000 r-xp 00800000 08:01 1234   /usr/bin/node
Rss:               21348 kB
Anonymous:             0 kB
02000000-02010000 r--p 01c00000 08:01 1234   /usr/bin/node
Rss:                  16 kB
Anonymous:             8 kB
02010000-02020000 rw-p 01c10000 08:01 1234   /usr/bin/node
Rss:                 124 kB
Anonymous:            96 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0
Rss:                1968 kB
Anonymous:          1968 kB
7f0000200000-7f0000300000 r--s 00000000 08:01 99   /var/lib/some.db
Rss:                  64 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r-xp 00000000 00:01 77   /memfd:jit (deleted)
Rss:                  40 kB
Anonymous:             0 kB
7f0000600000-7f0000700000 r--p 00000000 08:01 55   /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                   0 kB
Anonymous:             0 kB
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0   [vdso]
Rss:                   4 kB
Anonymous:             0 kB
`;

describe('parseSmaps', () => {
  it('reads every region with its range, permissions, path, resident and private KiB', () => {
    const regions = parseSmaps(SMAPS);
    expect(regions).toHaveLength(9);
    expect(regions[1]).toEqual({
      start: 0xc00000n,
      end: 0x2000000n,
      perms: 'r-xp',
      path: '/usr/bin/node',
      rssKiB: 21348,
      anonymousKiB: 0,
    });
    expect(regions[4]).toMatchObject({ path: '', rssKiB: 1968, anonymousKiB: 1968 });
  });
});

describe('cleanFileRegions', () => {
  it('keeps only private, read-only, file-backed regions without private copies', () => {
    const kept = cleanFileRegions(parseSmaps(SMAPS)).map((r) => `${r.perms} ${r.start}`);
    // Not RELRO (private copies), not writable data, not anonymous memory, not a shared
    // mapping, not a deleted file, not an empty region, not the vDSO.
    expect(kept).toEqual([`r--p ${0x400000n}`, `r-xp ${0xc00000n}`]);
  });
});

describe('releaseCleanFilePages', () => {
  it('advises each clean region once over its whole range and counts what madvise refused', () => {
    const calls: Array<[bigint, number]> = [];
    const result = releaseCleanFilePages(
      (start, length) => {
        calls.push([start, length]);
        return start === 0xc00000n ? -1 : 0;
      },
      () => SMAPS,
    );
    expect(calls).toEqual([
      [0x400000n, 0x800000],
      [0xc00000n, 0x1400000],
    ]);
    expect(result).toEqual({ regions: 1, releasedKiB: 5948, refused: 1 });
  });
});

describe('scheduleCleanPageRelease', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('releases after start-up, then periodically, logging the first release only, until cancelled', () => {
    const lines: string[] = [];
    let runs = 0;
    const release = (): CleanPageRelease => ({ regions: ++runs, releasedKiB: 1, refused: 0 });
    const cancel = scheduleCleanPageRelease(
      (level, msg, fields) => lines.push(`${level} ${msg} ${String(fields['regions'])}`),
      { firstMs: 1000, everyMs: 5000 },
      release,
    );
    jest.advanceTimersByTime(999);
    expect(runs).toBe(0);
    jest.advanceTimersByTime(1);
    expect(runs).toBe(1);
    jest.advanceTimersByTime(10_000);
    expect(runs).toBe(3);
    cancel();
    jest.advanceTimersByTime(60_000);
    expect(runs).toBe(3);
    expect(lines).toEqual(['info release start-up pages 1']);
  });

  it('logs a failure once and stops trying', () => {
    const lines: string[] = [];
    let runs = 0;
    scheduleCleanPageRelease(
      (level, msg, fields) => lines.push(`${level} ${msg} ${String(fields['error'])}`),
      { firstMs: 10, everyMs: 10 },
      () => {
        runs++;
        throw new Error('cannot load libc.so.6');
      },
    );
    jest.advanceTimersByTime(1000);
    expect(runs).toBe(1);
    expect(lines).toEqual(['warn release start-up pages failed cannot load libc.so.6']);
  });
});
