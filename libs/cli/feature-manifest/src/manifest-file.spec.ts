import fs from 'node:fs';
import path from 'node:path';
import { useTempDir } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import { MAX_MANIFEST_BYTES, readManifestFile } from './manifest-file';

async function failure(file: string): Promise<PodminError> {
  try {
    await readManifestFile(file);
  } catch (err) {
    if (err instanceof PodminError) return err;
    throw err;
  }
  throw new Error('expected a PodminError');
}

describe('readManifestFile', () => {
  const dir = useTempDir('manifest-file', 'all');

  it('reads a file up to the bound', async () => {
    const file = path.join(dir(), 'ok.yaml');
    fs.writeFileSync(file, 'a'.repeat(MAX_MANIFEST_BYTES));
    expect((await readManifestFile(file)).length).toBe(MAX_MANIFEST_BYTES);
  });

  it('refuses a regular file over the bound by its size', async () => {
    const file = path.join(dir(), 'big.yaml');
    fs.writeFileSync(file, 'a'.repeat(MAX_MANIFEST_BYTES + 1));
    const err = await failure(file);
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe(
      `reading --file ${file}: ${MAX_MANIFEST_BYTES + 1} bytes is larger than the ${MAX_MANIFEST_BYTES}-byte limit for a manifest`,
    );
  });

  it('stops reading an endless device at the bound', async () => {
    const err = await failure('/dev/zero');
    expect(err.message).toBe(
      `reading --file /dev/zero: it is larger than the ${MAX_MANIFEST_BYTES}-byte limit for a manifest`,
    );
  });

  it('says a directory is a directory', async () => {
    const err = await failure(dir());
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe(`reading --file ${dir()}: it is a directory, not a manifest file`);
  });

  it('says a missing file is missing', async () => {
    expect((await failure(path.join(dir(), 'absent.yaml'))).code).toBe('NOT_FOUND');
  });
});
