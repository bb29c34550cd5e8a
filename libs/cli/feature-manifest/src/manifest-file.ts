import fs from 'node:fs/promises';
import { PodminError } from '@podmin/util-errors';

/** Largest manifest file the CLI reads. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** Reads a manifest file (bounded), naming the flag in errors. */
export async function readManifestFile(file: string, flag = '--file'): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PodminError(
      code === 'ENOENT' ? 'NOT_FOUND' : 'IO_ERROR',
      `reading ${flag} ${file}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      {
        cause: err,
        ...(code === 'ENOENT'
          ? { hint: 'create one with `podmin init <name> -g <nodegroup> --image <image>`' }
          : {}),
      },
    );
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_MANIFEST_BYTES) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `reading ${flag} ${file}: ${size} bytes is larger than the ${MAX_MANIFEST_BYTES}-byte limit for a manifest`,
      );
    }
    const text = await handle.readFile('utf8');
    if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `reading ${flag} ${file}: larger than the ${MAX_MANIFEST_BYTES}-byte limit for a manifest`,
      );
    }
    return text;
  } finally {
    await handle.close();
  }
}
