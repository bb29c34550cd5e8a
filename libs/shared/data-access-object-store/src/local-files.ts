import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, open } from 'node:fs/promises';
import { PodminError } from '@podmin/util-errors';
import { ObjectTooLargeError } from './errors';
import type { ObjectBody } from './object-store.port';

// File helpers of the local directory bucket: ETags by file identity, ranged and bounded reads,
// hashing and fsync (moved out of local-directory-object-store.ts unchanged).

const READ_CHUNK_BYTES = 1024 * 1024;

/** ETags of published files by identity: published files are never modified in place. */
export class EtagCache {
  private readonly entries = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  lookup(stats: Stats): string | undefined {
    return this.entries.get(EtagCache.identity(stats));
  }

  remember(stats: Stats, etag: string): string {
    const id = EtagCache.identity(stats);
    this.entries.delete(id);
    this.entries.set(id, etag);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) {
        this.entries.delete(oldest.value);
      }
    }
    return etag;
  }

  private static identity(stats: Stats): string {
    return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  }
}

/** `length` bytes of an open file from `position`, read straight into the caller's buffers. */
export class FileRangeBody implements ObjectBody {
  private closed = false;

  constructor(
    private readonly handle: FileHandle,
    private position: number,
    private remaining: number,
    private readonly doing: string,
  ) {}

  async read(into: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < into.length && this.remaining > 0) {
      const { bytesRead } = await this.handle
        .read(into, filled, Math.min(into.length - filled, this.remaining), this.position)
        .catch((err: unknown) => {
          throw new PodminError(
            'BUCKET_UNAVAILABLE',
            `${this.doing}: ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          );
        });
      if (bytesRead === 0) {
        // Never end short of the size already reported (a consumer may have sent it as Content-Length).
        throw new PodminError(
          'BUCKET_UNAVAILABLE',
          `${this.doing}: the file ended ${this.remaining} bytes early`,
        );
      }
      this.position += bytesRead;
      this.remaining -= bytesRead;
      filled += bytesRead;
    }
    return filled;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/** Reads a whole object file of `size` bytes, OBJECT_TOO_LARGE over `maxBytes`. */
export async function readBounded(
  handle: FileHandle,
  size: number,
  maxBytes: number,
  doing: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  if (size > maxBytes) {
    throw new ObjectTooLargeError(doing, maxBytes, size);
  }
  // The file may have grown since fstat (edited in place by hand): cap the read regardless.
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, maxBytes - total + 1));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
    if (bytesRead === 0) {
      return Buffer.concat(chunks, total);
    }
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) {
      throw new ObjectTooLargeError(doing, maxBytes);
    }
  }
}

/** Whether `err` is an abort (a cancelled read). */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

/** The S3-style MD5 ETag of an open file. */
export async function hashFile(handle: FileHandle): Promise<string> {
  const hash = createHash('md5');
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) {
      return `"${hash.digest('hex')}"`;
    }
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}

/** Fsyncs a directory, best effort. */
export async function fsyncDirectory(dir: string): Promise<void> {
  // Makes the new directory entry durable; some platforms cannot open directories, which is fine.
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close();
  }
}

/** Whether `file` is anything but a regular file (true when it cannot be read). */
export async function notAFile(file: string): Promise<boolean> {
  try {
    return !(await lstat(file)).isFile();
  } catch {
    return true;
  }
}

/** A body as bytes (strings as UTF-8). */
export function toBuffer(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
