import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ObjectTooLargeError, assertLocalKey } from '@podmin/data-access-object-store';
import { PodminError } from '@podmin/util-errors';
import { resolveRange } from '../range';
import type {
  ByteRange,
  ObjectBody,
  OpenedObject,
  RegistryStore,
  UnsatisfiableRange,
} from '../registry.ports';

/**
 * The registry's bucket port over a local directory (`--provider local`): object `key` is
 * the file `<root>/<key>`. ETags are derived from size and modification time.
 */
export class LocalDirectoryRegistryStore implements RegistryStore {
  constructor(private readonly root: string) {}

  /** Reads a whole file of at most `maxBytes`. */
  async readBounded(key: string, maxBytes: number): Promise<Buffer> {
    const file = this.file(key);
    const handle = await open(file, 'r').catch((err: unknown) => this.fail(key, 'reading', err));
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) {
        throw new ObjectTooLargeError(`reading ${this.describe(key)}`, maxBytes, size);
      }
      return await handle.readFile();
    } catch (err) {
      return this.fail(key, 'reading', err);
    } finally {
      await handle.close();
    }
  }

  /** Opens a file (or a range of it), read with positioned reads into the caller's buffers. */
  async openRead(key: string, range?: ByteRange): Promise<OpenedObject | UnsatisfiableRange> {
    const file = this.file(key);
    const handle = await open(file, 'r').catch((err: unknown) => this.fail(key, 'opening', err));
    let handedOver = false;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        return this.fail(
          key,
          'opening',
          Object.assign(new Error('not a file'), { code: 'ENOENT' }),
        );
      }
      const resolved =
        range === undefined ? { start: 0, end: stats.size - 1 } : resolveRange(range, stats.size);
      if (resolved === undefined) {
        return { kind: 'unsatisfiable', size: stats.size };
      }
      const body = new FileRangeBody(
        handle,
        resolved.start,
        resolved.end - resolved.start + 1,
        this.describe(key),
      );
      handedOver = true;
      return {
        kind: 'opened',
        body,
        size: stats.size,
        ...resolved,
        etag: `"${stats.size}-${stats.mtimeMs}"`,
      };
    } finally {
      if (!handedOver) await handle.close();
    }
  }

  /** Size and ETag of a file. */
  async stat(key: string): Promise<{ size: number; etag: string }> {
    const stats = await stat(this.file(key)).catch((err: unknown) =>
      this.fail(key, 'inspecting', err),
    );
    if (!stats.isFile()) {
      return this.fail(
        key,
        'inspecting',
        Object.assign(new Error('not a file'), { code: 'ENOENT' }),
      );
    }
    return { size: stats.size, etag: `"${stats.size}-${stats.mtimeMs}"` };
  }

  private describe(key: string): string {
    return `object ${JSON.stringify(key)} in local bucket ${this.root}`;
  }

  private file(key: string): string {
    assertLocalKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  private fail(key: string, doing: string, err: unknown): never {
    if (err instanceof PodminError) throw err;
    const code =
      typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined;
    const what = `${doing} ${this.describe(key)}`;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
      throw new PodminError('OBJECT_NOT_FOUND', `${what}: no such object`, { cause: err });
    }
    if (code === 'EACCES' || code === 'EPERM') {
      throw new PodminError('ACCESS_DENIED', `${what}: permission denied`, { cause: err });
    }
    throw new PodminError(
      'BUCKET_UNAVAILABLE',
      `${what}: ${err instanceof Error ? err.message : 'failed'}`,
      { cause: err },
    );
  }
}

/** `length` bytes of an open file from `position`, read straight into the caller's buffers. */
class FileRangeBody implements ObjectBody {
  private closed = false;

  constructor(
    private readonly handle: FileHandle,
    private position: number,
    private remaining: number,
    private readonly what: string,
  ) {}

  async read(into: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < into.length && this.remaining > 0) {
      const { bytesRead } = await this.handle.read(
        into,
        filled,
        Math.min(into.length - filled, this.remaining),
        this.position,
      );
      if (bytesRead === 0) {
        // Never end short of the Content-Length already sent as if the object were whole.
        throw new PodminError(
          'BUCKET_UNAVAILABLE',
          `reading ${this.what}: the file ended ${this.remaining} bytes early`,
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
