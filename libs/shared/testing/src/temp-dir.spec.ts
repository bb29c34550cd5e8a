import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeTempDir } from './temp-dir';

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
