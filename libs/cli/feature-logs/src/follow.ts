import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CriLineJoiner, parseCriLine } from './cri-log';
import {
  currentLogFiles,
  filterLines,
  mergeByTime,
  readLogText,
  type PodLogSource,
  type ReadOptions,
  type SourcedLine,
} from './pod-logs';

/** How `followPodLogs` polls. */
export interface FollowOptions extends ReadOptions {
  /** Ends following. */
  signal: AbortSignal;
  /** Receives every line: first the existing ones (filtered like `readPodLogs`), then new ones. */
  onLine: (line: SourcedLine) => void;
  /** Finds the sources again (a rollout starts a Pod, a restart a new file); default none. */
  rescan?: () => Promise<PodLogSource[]>;
  /** Poll interval for new bytes (default 250 ms). */
  pollMs?: number;
  /** Interval between rescans (default 2 s). */
  rescanMs?: number;
}

/** Where following one source stands: the file being read and the bytes not yet a line. */
interface Cursor {
  source: PodLogSource;
  file: string | undefined;
  handle: fs.FileHandle | undefined;
  ino: number;
  offset: number;
  rest: string;
  joiner: CriLineJoiner;
}

async function readNew(cursor: Cursor, emit: (line: SourcedLine) => void): Promise<void> {
  if (cursor.handle === undefined) return;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    const { bytesRead } = await cursor.handle.read(buf, 0, buf.length, cursor.offset);
    if (bytesRead === 0) break;
    cursor.offset += bytesRead;
    const text = cursor.rest + buf.subarray(0, bytesRead).toString('utf8');
    const lines = text.split('\n');
    cursor.rest = lines.pop() ?? '';
    for (const raw of lines) {
      const record = parseCriLine(raw);
      if (record === undefined) continue;
      const line = cursor.joiner.push(record);
      if (line !== undefined) emit({ ...line, source: cursor.source });
    }
  }
}

async function openAt(cursor: Cursor, file: string, offset: number): Promise<void> {
  await cursor.handle?.close();
  cursor.handle = undefined;
  cursor.file = file;
  cursor.rest = '';
  try {
    cursor.handle = await fs.open(file, 'r');
    cursor.ino = (await cursor.handle.stat()).ino;
    cursor.offset = offset;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    cursor.file = undefined;
  }
}

/** Moves a cursor to the container's current file when kubelet rotated it or the container restarted. */
async function advance(cursor: Cursor, emit: (line: SourcedLine) => void): Promise<void> {
  const files = await currentLogFiles(cursor.source.dir);
  const live = files[files.length - 1];
  if (live === undefined) return;
  if (cursor.file !== live) {
    // A new container instance: finish the old file, then read the new one from its start.
    await readNew(cursor, emit);
    await openAt(cursor, live, 0);
    return;
  }
  const ino = await fs
    .stat(live)
    .then((s) => s.ino)
    .catch(() => cursor.ino);
  if (ino !== cursor.ino) {
    // Rotated: the open handle still reads the renamed file to its end.
    await readNew(cursor, emit);
    await openAt(cursor, live, 0);
  }
}

/**
 * Prints what the sources hold (filtered by `since`/`tail`), then every new line until the
 * signal aborts; follows kubelet's rotation and container restarts, and with `rescan` Pods that
 * start later (a rollout's new Pod).
 */
export async function followPodLogs(
  sources: readonly PodLogSource[],
  options: FollowOptions,
): Promise<void> {
  const cursors = new Map<string, Cursor>();
  const start = async (source: PodLogSource, fromStart: boolean): Promise<void> => {
    const cursor: Cursor = {
      source,
      file: undefined,
      handle: undefined,
      ino: 0,
      offset: 0,
      rest: '',
      joiner: new CriLineJoiner(),
    };
    const files = await currentLogFiles(source.dir);
    const live = files[files.length - 1];
    if (live !== undefined) {
      const size = fromStart
        ? 0
        : await fs.stat(live).then(
            (s) => s.size,
            () => 0,
          );
      await openAt(cursor, live, size);
    }
    cursors.set(source.dir, cursor);
  };
  // What exists now (rotated files, and the live file up to the size it had when opened),
  // then every byte past that size: nothing is printed twice or lost in between.
  for (const source of sources) await start(source, false);
  const existing: SourcedLine[][] = [];
  for (const cursor of cursors.values()) {
    const files = await currentLogFiles(cursor.source.dir);
    let text = await readLogText(files.filter((f) => f !== cursor.file));
    if (cursor.handle !== undefined && cursor.offset > 0) {
      const head = Buffer.alloc(cursor.offset);
      const { bytesRead } = await cursor.handle.read(head, 0, cursor.offset, 0);
      text += head.subarray(0, bytesRead).toString('utf8');
    }
    // A last line without its newline yet is completed by the loop, not printed half.
    const cut = text.lastIndexOf('\n') + 1;
    cursor.rest = text.slice(cut);
    existing.push(filterLines(cursor.source, text.slice(0, cut), options));
  }
  for (const line of mergeByTime(existing)) options.onLine(line);
  const pollMs = options.pollMs ?? 250;
  const rescanMs = options.rescanMs ?? 2000;
  let lastScan = Date.now();
  try {
    while (!options.signal.aborted) {
      if (options.rescan !== undefined && Date.now() - lastScan >= rescanMs) {
        lastScan = Date.now();
        const found = await options.rescan().catch(() => undefined);
        for (const source of found ?? []) if (!cursors.has(source.dir)) await start(source, true);
      }
      for (const cursor of cursors.values()) {
        await advance(cursor, options.onLine);
        await readNew(cursor, options.onLine);
      }
      await sleep(pollMs, undefined, { signal: options.signal }).catch(() => undefined);
    }
  } finally {
    for (const cursor of cursors.values()) await cursor.handle?.close();
  }
}
