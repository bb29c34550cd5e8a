import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A temporary directory and the function that removes it. */
export interface TempDir {
  /** Absolute path of the new, empty directory. */
  path: string;
  /** Removes the directory and everything in it; safe to call twice. */
  cleanup: () => Promise<void>;
}

/** Creates a fresh directory under `os.tmpdir()` whose name starts with `prefix`. */
export async function makeTempDir(prefix: string): Promise<TempDir> {
  const safePrefix = prefix.replace(/[^A-Za-z0-9._-]/g, '-');
  const dir = await mkdtemp(path.join(os.tmpdir(), `${safePrefix}-`));
  return {
    path: dir,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
