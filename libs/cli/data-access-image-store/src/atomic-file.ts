import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';

/** A unique file name for a temporary file in `dir` (same filesystem as the target). */
export function tempName(dir: string, what: string): string {
  return path.join(dir, `${what}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/** Flushes a directory's entries to disk; best effort (some filesystems refuse). */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // fsync of a directory is advisory here: the rename itself is atomic.
  }
}

/** Writes `bytes` to `target` atomically: temp file in `tempDir`, fsync, rename, fsync dir. */
export async function writeFileAtomic(
  target: string,
  bytes: Buffer,
  tempDir: string,
): Promise<void> {
  await mkdir(tempDir, { recursive: true });
  await mkdir(path.dirname(target), { recursive: true });
  const temp = tempName(tempDir, path.basename(target));
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw new PodminError('IO_ERROR', `writing ${target}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  await syncDir(path.dirname(target));
}

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** A lock file older than this is taken over (default 60 s). */
  staleMs?: number;
}

/**
 * Runs `body` while holding an exclusive lock file (O_EXCL create), so concurrent podmin
 * processes update one layout's `index.json` one at a time. A lock whose holder process is
 * gone, or that is older than `staleMs`, is taken over.
 */
export async function withFileLock<T>(
  lockFile: string,
  body: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const staleMs = options.staleMs ?? 60_000;
  await mkdir(path.dirname(lockFile), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      try {
        await handle.writeFile(String(process.pid));
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isStale(lockFile, staleMs)) {
        await unlink(lockFile).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new PodminError('IO_ERROR', `locking ${lockFile}: still held by another podmin`, {
          hint: `if no other podmin is running, remove ${lockFile}`,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, 10 * (attempt + 1))));
    }
  }
  try {
    return await body();
  } finally {
    await unlink(lockFile).catch(() => undefined);
  }
}

async function isStale(lockFile: string, staleMs: number): Promise<boolean> {
  try {
    const info = await stat(lockFile);
    if (Date.now() - info.mtimeMs > staleMs) return true;
    const handle = await open(lockFile, 'r');
    let pid: number;
    try {
      pid = Number((await handle.readFile('utf8')).trim());
    } finally {
      await handle.close();
    }
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    return false;
  }
}
