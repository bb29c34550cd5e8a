import fs from 'node:fs';
import { PodminError } from '@podmin/util-errors';

/** Largest manifest file the CLI reads. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * Reads a manifest file as a stream bounded by MAX_MANIFEST_BYTES, naming the flag in errors.
 * Synchronous underneath: node:fs/promises is not in Node.js's startup snapshot, and requiring
 * it cost `podmin validate` 2.7 ms of a start budget of about 12 (bench/cli-start.mjs).
 */
export async function readManifestFile(file: string, flag = '--file'): Promise<string> {
  return Promise.resolve().then(() => readManifestFileSync(file, flag));
}

function readManifestFileSync(file: string, flag: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw isDirectory(file, flag);
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
    const stats = fs.fstatSync(fd);
    if (stats.isDirectory()) throw isDirectory(file, flag);
    if (stats.isFile() && stats.size > MAX_MANIFEST_BYTES) {
      throw tooLarge(file, flag, `${stats.size} bytes is larger than`);
    }
    // Read as a bounded stream whatever the file is: devices, pipes and files that grow
    // report no useful size, and must not be read past the bound.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, MAX_MANIFEST_BYTES + 1 - total));
      const bytesRead = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > MAX_MANIFEST_BYTES) throw tooLarge(file, flag, 'it is larger than');
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (err) {
    if (err instanceof PodminError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'EISDIR') throw isDirectory(file, flag);
    throw new PodminError('IO_ERROR', `reading ${flag} ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    fs.closeSync(fd);
  }
}

const READ_CHUNK_BYTES = 64 * 1024;

function isDirectory(file: string, flag: string): PodminError {
  return new PodminError(
    'INVALID_ARGUMENT',
    `reading ${flag} ${file}: it is a directory, not a manifest file`,
    { hint: `pass the manifest file itself, e.g. ${flag} daemonset.yaml` },
  );
}

function tooLarge(file: string, flag: string, what: string): PodminError {
  return new PodminError(
    'INVALID_ARGUMENT',
    `reading ${flag} ${file}: ${what} the ${MAX_MANIFEST_BYTES}-byte limit for a manifest`,
  );
}
