import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';

/**
 * Writes `file` atomically with `mode`: a temporary file in the same directory, fsync, rename,
 * then fsync of the directory, so readers see the old or the new content, never a mix.
 */
export async function writeFileAtomically(file: string, data: string, mode: number): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(tmp, 'wx', mode);
    await handle.writeFile(data);
    // The umask may have narrowed or the file been created before; set the exact mode.
    await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(tmp, file);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await fs.rm(tmp, { force: true });
    throw new PodminError('IO_ERROR', `writing ${file}: ${(err as Error).message}`, { cause: err });
  }
  const dirHandle = await fs.open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

/** Timing of the cross-process lock around a read-modify-write of the store file. */
export interface FileLockTiming {
  /** Longest wait for a lock held by someone else (ms). */
  timeoutMs: number;
  /** A lock older than this is presumed abandoned (ms). */
  staleMs: number;
}

/**
 * Runs `fn` holding `lockFile` (created with O_EXCL). Node.js has no flock(2), hence this
 * hand-written lock: a holder whose PID is gone on this host, or that held it longer than
 * `staleMs`, loses it; waiting is bounded by `timeoutMs`.
 */
export async function withLockFile<T>(
  lockFile: string,
  timing: FileLockTiming,
  fn: () => Promise<T>,
): Promise<T> {
  const token = `${process.pid}@${os.hostname()}@${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + timing.timeoutMs;
  await fs.mkdir(path.dirname(lockFile), { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await fs.open(lockFile, 'wx', 0o600);
      try {
        await handle.writeFile(token);
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new PodminError('IO_ERROR', `locking ${lockFile}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      if (await isAbandoned(lockFile, timing.staleMs)) {
        await fs.rm(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new PodminError(
          'IO_ERROR',
          `locking ${lockFile}: still held by another process after ${timing.timeoutMs} ms`,
          { hint: 'if no other podmin process is running, remove the lock file' },
        );
      }
      const delay = Math.min(50, 2 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  try {
    return await fn();
  } finally {
    // Remove only our own lock: a stale-broken lock may since belong to someone else.
    const current = await fs.readFile(lockFile, 'utf8').catch(() => undefined);
    if (current === token) await fs.rm(lockFile, { force: true });
  }
}

async function isAbandoned(lockFile: string, staleMs: number): Promise<boolean> {
  try {
    const [stat, text] = await Promise.all([fs.stat(lockFile), fs.readFile(lockFile, 'utf8')]);
    if (Date.now() - stat.mtimeMs > staleMs) return true;
    const [pidText, host] = text.split('@');
    const pid = Number(pidText);
    if (host === os.hostname() && Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 0);
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    }
    return false;
  } catch {
    // Gone between the failed create and this check, or still being written: retry.
    return false;
  }
}
