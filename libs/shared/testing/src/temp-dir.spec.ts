import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeTempDir, useTempDir } from './temp-dir';

describe('makeTempDir', () => {
  it('creates an empty directory under the system temp dir and removes it with its content', async () => {
    const dir = await makeTempDir('podmin test/dir');
    expect(path.dirname(dir.path)).toBe(os.tmpdir());
    expect(path.basename(dir.path)).toMatch(/^podmin-test-dir-/);
    expect(await readdir(dir.path)).toEqual([]);
    await writeFile(path.join(dir.path, 'file'), 'x');
    await dir.cleanup();
    expect(existsSync(dir.path)).toBe(false);
    await expect(dir.cleanup()).resolves.toBeUndefined();
  });
});

describe('useTempDir', () => {
  const dir = useTempDir('podmin use/dir');
  const seen: string[] = [];

  it('gives each test a new, empty directory under the system temp dir', async () => {
    expect(path.dirname(dir())).toBe(os.tmpdir());
    expect(path.basename(dir())).toMatch(/^podmin-use-dir-/);
    expect(await readdir(dir())).toEqual([]);
    await writeFile(path.join(dir(), 'file'), 'x');
    seen.push(dir());
  });

  it("removed the previous test's directory", () => {
    expect(seen).toHaveLength(1);
    expect(existsSync(seen[0]!)).toBe(false);
    expect(dir()).not.toBe(seen[0]);
  });
});

describe('useTempDir for a whole describe', () => {
  const dir = useTempDir('podmin-all', 'all');
  let first: string | undefined;

  it('keeps one directory for every test', () => {
    first = dir();
    expect(existsSync(first)).toBe(true);
  });

  it('is the same directory in the next test', () => {
    expect(dir()).toBe(first);
  });
});

describe('useTempDir outside a test', () => {
  const dir = useTempDir('podmin-outside');
  it('is read inside tests only', () => expect(typeof dir()).toBe('string'));
  afterAll(() => expect(() => dir()).toThrow('useTempDir: read the directory inside a test'));
});
