import { mkdtempSync, rmSync } from 'node:fs';
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

/**
 * A fresh directory under `os.tmpdir()` for every test of the enclosing `describe` (or one for
 * all of them with `'all'`), removed after it; read its path inside tests through the getter.
 */
export function useTempDir(prefix: string, lifetime: 'each' | 'all' = 'each'): () => string {
  let current: string | undefined;
  const make = (): void => {
    current = mkdtempSync(path.join(os.tmpdir(), `${prefix.replace(/[^A-Za-z0-9._-]/g, '-')}-`));
  };
  const remove = (): void => {
    if (current !== undefined) rmSync(current, { recursive: true, force: true });
    current = undefined;
  };
  if (lifetime === 'each') {
    beforeEach(make);
    afterEach(remove);
  } else {
    beforeAll(make);
    afterAll(remove);
  }
  return () => {
    if (current === undefined) throw new Error('useTempDir: read the directory inside a test');
    return current;
  };
}
