import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';

/** Writes a file atomically: temp file in the same directory, fsync, rename, then fsync the directory. */
export async function atomicWriteFile(
  file: string,
  data: string | Buffer,
  mode = 0o600,
): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(
    dir,
    `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(tmp, 'wx', mode);
    await handle.writeFile(data);
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

/** Options of an advisory lock file. */
export interface LockOptions {
  /** How long to wait for the lock before failing (ms). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned and broken (ms). */
  staleMs?: number;
}

/**
 * Runs `fn` holding an exclusive lock file (created with O_EXCL) so concurrent processes
 * serialise their read-modify-write of one file; abandoned locks are broken.
 */
export async function withFileLock<T>(
  lockFile: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  await fs.mkdir(path.dirname(lockFile), { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await fs.open(lockFile, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isAbandoned(lockFile, staleMs)) {
        await fs.rm(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new PodminError(
          'IO_ERROR',
          `locking ${lockFile}: still held by another process after ${timeoutMs} ms`,
          {
            hint: 'if no other podmin command is running, remove the lock file',
          },
        );
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(100, 5 + attempt * 5) * (0.5 + Math.random())),
      );
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockFile, { force: true });
  }
}

async function isAbandoned(lockFile: string, staleMs: number): Promise<boolean> {
  try {
    const [stat, pidText] = await Promise.all([fs.stat(lockFile), fs.readFile(lockFile, 'utf8')]);
    if (Date.now() - stat.mtimeMs > staleMs) return true;
    const pid = Number(pidText);
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 0);
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    }
    return false;
  } catch {
    // Vanished between the failed create and this check: the next attempt may take it.
    return false;
  }
}
