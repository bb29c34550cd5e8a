import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';

/** Timing of a cross-process lock file. */
export interface FileLockOptions {
  /** Longest wait for a lock held by someone else before failing (default 10 s). */
  timeoutMs?: number;
  /** A lock older than this is presumed abandoned and may be broken (default 30 s). */
  staleMs?: number;
  /** Error code raised when the wait times out (default IO_ERROR). */
  busyCode?: PodminErrorCode;
}

interface LockTiming {
  timeoutMs: number;
  staleMs: number;
  busyCode: PodminErrorCode;
}

/** What a holder writes into its lock file, so others can tell a dead holder from a live one. */
interface LockRecord {
  pid: number;
  host: string;
  token: string;
}

const FIRST_RETRY_MS = 2;
const MAX_RETRY_MS = 50;

/**
 * Runs `fn` while holding the lock file `lockPath`, created with O_EXCL so that it excludes
 * other processes as well as other callers in this one. Node.js has no flock(2), hence this
 * hand-written lock: a holder that died (its PID is gone on this host) or that held the lock
 * longer than `staleMs` loses it; waiting is bounded by `timeoutMs`.
 */
export async function withFileLock<T>(
  lockPath: string,
  doing: string,
  fn: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const timing: LockTiming = {
    timeoutMs: options.timeoutMs ?? 10_000,
    staleMs: options.staleMs ?? 30_000,
    busyCode: options.busyCode ?? 'IO_ERROR',
  };
  const token = await acquire(lockPath, timing, doing);
  try {
    return await fn();
  } finally {
    await release(lockPath, token);
  }
}

async function acquire(lockPath: string, options: LockTiming, doing: string): Promise<string> {
  const token = randomBytes(12).toString('hex');
  const record: LockRecord = { pid: process.pid, host: os.hostname(), token };
  const deadline = Date.now() + options.timeoutMs;
  let delay = FIRST_RETRY_MS;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(record));
      } finally {
        await handle.close();
      }
      return token;
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT') {
        await mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 }).catch(
          (mkdirErr: unknown) => {
            throw lockFileError(mkdirErr, lockPath, doing);
          },
        );
        continue;
      }
      if (code !== 'EEXIST') {
        throw lockFileError(err, lockPath, doing);
      }
    }
    if (await breakIfStale(lockPath, options.staleMs)) {
      continue;
    }
    if (Date.now() >= deadline) {
      throw new PodminError(
        options.busyCode,
        `${doing}: another writer held the lock ${lockPath} for more than ${options.timeoutMs} ms`,
        { hint: `if no podmin process is running, remove ${lockPath}` },
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}

/** A lock file that cannot be created, naming what was being done, the file and the errno. */
function lockFileError(err: unknown, lockPath: string, doing: string): PodminError {
  const code = errnoCode(err);
  const denied = code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
  // The errno names the failure; the errno message would repeat the path.
  const why = code === undefined ? String(err) : denied ? `${code} (permission denied)` : code;
  return new PodminError(
    denied ? 'ACCESS_DENIED' : 'IO_ERROR',
    `${doing}: cannot create the lock file ${lockPath}: ${why}`,
    {
      cause: err,
      ...(denied
        ? {
            hint: `make ${path.dirname(lockPath)} writable by this user (check \`ls -ld ${path.dirname(lockPath)}\`), or run as its owner`,
          }
        : {}),
    },
  );
}

async function release(lockPath: string, token: string): Promise<void> {
  // Only remove the lock if it is still ours: it may have been broken as stale and retaken.
  const holder = await inspect(lockPath);
  if (holder?.record?.token === token) {
    await unlink(lockPath).catch(ignoreMissing);
  }
}

/** Returns true when the lock is gone or was broken, false when a live holder has it. */
async function breakIfStale(lockPath: string, staleMs: number): Promise<boolean> {
  const holder = await inspect(lockPath);
  if (holder === undefined) {
    return true;
  }
  if (!isStale(holder, staleMs)) {
    return false;
  }
  // Two processes breaking the same stale lock could otherwise both unlink, the second one
  // removing a lock that a third process has freshly taken; a guard file serialises breakers.
  const guardPath = `${lockPath}.break`;
  try {
    await (await open(guardPath, 'wx', 0o600)).close();
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') {
      throw err;
    }
    const guard = await statOrUndefined(guardPath);
    if (guard !== undefined && Date.now() - guard.mtimeMs > staleMs) {
      await unlink(guardPath).catch(ignoreMissing);
    }
    return false;
  }
  try {
    const again = await inspect(lockPath);
    if (again !== undefined && again.stats.ino === holder.stats.ino && isStale(again, staleMs)) {
      await unlink(lockPath).catch(ignoreMissing);
    }
    return true;
  } finally {
    await unlink(guardPath).catch(ignoreMissing);
  }
}

interface Holder {
  stats: Stats;
  record: LockRecord | undefined;
}

async function inspect(lockPath: string): Promise<Holder | undefined> {
  const stats = await statOrUndefined(lockPath);
  if (stats === undefined) {
    return undefined;
  }
  let record: LockRecord | undefined;
  try {
    record = JSON.parse(await readFile(lockPath, 'utf8')) as LockRecord;
  } catch {
    // Missing, or the holder has created but not yet written it.
    record = undefined;
  }
  return { stats, record };
}

function isStale(holder: Holder, staleMs: number): boolean {
  if (Date.now() - holder.stats.mtimeMs > staleMs) {
    return true;
  }
  const record = holder.record;
  return record !== undefined && record.host === os.hostname() && !processExists(record.pid);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
}

async function statOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await stat(file);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') {
      return undefined;
    }
    throw err;
  }
}

function ignoreMissing(err: unknown): void {
  if (errnoCode(err) !== 'ENOENT') {
    throw err;
  }
}

/** The `code` of a Node.js system error, if any. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
