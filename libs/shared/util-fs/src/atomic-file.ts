import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';

/** A unique temporary file name in `dir` (same filesystem as the target, so rename is atomic). */
export function tempName(dir: string, what: string): string {
  return path.join(dir, `.${what}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
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

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the written file (default 0600), set exactly regardless of the umask. */
  mode?: number;
  /** Directory for the temporary file (default: the target's; must be on the same filesystem). */
  tempDir?: string;
  /** Mode of directories created on the way (default 0700). */
  dirMode?: number;
}

/**
 * Writes `file` atomically: a temporary file, fsync, rename over the target, fsync of the
 * directory — readers see the old or the new content, never a mix.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Buffer,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = path.dirname(file);
  const tempDir = options.tempDir ?? dir;
  await mkdir(dir, { recursive: true, mode: options.dirMode ?? 0o700 });
  if (tempDir !== dir) await mkdir(tempDir, { recursive: true, mode: options.dirMode ?? 0o700 });
  const temp = tempName(tempDir, path.basename(file));
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx', mode);
    await handle.writeFile(data);
    await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw new PodminError('IO_ERROR', `writing ${file}: ${(err as Error).message}`, { cause: err });
  }
  await syncDir(dir);
}
