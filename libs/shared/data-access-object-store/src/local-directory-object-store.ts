import { createHash, randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { link, lstat, mkdir, open, readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { ObjectTooLargeError, describeObject } from './errors';
import { etagsEqual, md5Etag } from './etag';
import { errnoCode, withFileLock } from '@podmin/util-fs';
import { assertValidRange, resolveRange } from './byte-range';
import type {
  ConditionalGetResult,
  GetOptions,
  ListPage,
  ListedObject,
  ObjectBody,
  ObjectHead,
  ObjectStore,
  OpenReadOptions,
  OpenReadResult,
  ServerTimeSample,
  StoredObject,
} from './object-store.port';
import { DEFAULT_MAX_READ_BYTES, assertValidKey } from './object-store.port';

/** Name prefix of in-flight temporary files; never a key segment, never listed. */
export const LOCAL_TEMP_PREFIX = '.podmin-tmp-';
/** Top-level directory of per-key lock files; never a key segment, never listed. */
export const LOCAL_LOCK_DIR = '.podmin-locks';

/** Tuning of a local directory bucket. */
export interface LocalDirectoryObjectStoreOptions {
  /** Longest wait for another writer's per-key lock (default 10 s). */
  lockTimeoutMs?: number;
  /** A lock held longer than this is presumed abandoned and broken (default 30 s). */
  staleLockMs?: number;
  /** This process's wall clock, epoch milliseconds, for server-time samples (default `Date.now`). */
  now?: () => number;
}

const PAGE_SIZE = 1000;
const READ_CHUNK_BYTES = 1024 * 1024;
const ETAG_CACHE_ENTRIES = 10_000;
const TEMP_CREATE_ATTEMPTS = 3;

/** Rejects keys the local store cannot hold: invalid ones, and those using its reserved names. */
export function assertLocalKey(key: string): void {
  assertValidKey(key);
  const segments = key.split('/');
  if (segments[0] === LOCAL_LOCK_DIR || segments.some((s) => s.startsWith(LOCAL_TEMP_PREFIX))) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `object key ${JSON.stringify(key)}: "${LOCAL_LOCK_DIR}" and "${LOCAL_TEMP_PREFIX}*" are reserved by the local bucket`,
    );
  }
}

/**
 * A bucket that is a directory: each object is the file at its key path, so it can be
 * inspected with ordinary tools. Writes go to a temporary file in the same directory, are
 * fsynced, then published by link (create-only) or rename (replace); replacing writes and
 * deletes hold a per-key lock file so compare-and-swap is safe across processes. The server's
 * time is the modification time the kernel gave the last file written.
 */
export class LocalDirectoryObjectStore implements ObjectStore {
  private readonly root: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly etags = new EtagCache(ETAG_CACHE_ENTRIES);
  private readonly now: () => number;
  private serverTime: ServerTimeSample | undefined;

  constructor(directory: string, options: LocalDirectoryObjectStoreOptions = {}) {
    this.root = path.resolve(directory);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The modification time of the last file this store wrote, with this store's clock beside it.
   * The kernel stamps it from the real clock even when this process's clock is faked
   * (libfaketime), and node's fstat is a direct system call that no preload rewrites.
   */
  lastServerTime(): ServerTimeSample | undefined {
    return this.serverTime;
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject> {
    assertLocalKey(key);
    const doing = `reading ${this.describe(key)}`;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
    options.signal?.throwIfAborted();
    return this.withObjectFile(
      key,
      doing,
      async (handle, stats) => {
        const body = await readBounded(handle, stats.size, maxBytes, doing, options.signal);
        return { body, etag: this.etags.remember(stats, md5Etag(body)) };
      },
      true,
    );
  }

  async getIfChanged(
    key: string,
    etag: string,
    options: GetOptions = {},
  ): Promise<ConditionalGetResult> {
    assertLocalKey(key);
    const doing = `reading ${this.describe(key)} if changed`;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
    options.signal?.throwIfAborted();
    return this.withObjectFile(
      key,
      doing,
      async (handle, stats) => {
        const known = this.etags.lookup(stats);
        if (known !== undefined && etagsEqual(known, etag)) {
          return { status: 'unchanged', etag: known };
        }
        if (stats.size > maxBytes) {
          // Too large to return, but an unchanged object is still answered as unchanged.
          const current = known ?? this.etags.remember(stats, await hashFile(handle));
          if (etagsEqual(current, etag)) {
            return { status: 'unchanged', etag: current };
          }
          throw new ObjectTooLargeError(doing, maxBytes, stats.size);
        }
        const body = await readBounded(handle, stats.size, maxBytes, doing, options.signal);
        const current = this.etags.remember(stats, md5Etag(body));
        return etagsEqual(current, etag)
          ? { status: 'unchanged', etag: current }
          : { status: 'changed', body, etag: current };
      },
      true,
    );
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    assertLocalKey(key);
    const doing = `creating ${this.describe(key)}`;
    const content = toBuffer(body);
    const target = this.pathOf(key);
    const temp = await this.writeTemp(key, content, doing);
    try {
      await link(temp, target);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST' && !(await isDirectory(target))) {
        throw new PodminError('PRECONDITION_FAILED', `${doing}: it already exists`, { cause: err });
      }
      throw await this.writeError(err, key, doing);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await fsyncDirectory(path.dirname(target));
    return md5Etag(content);
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    assertLocalKey(key);
    const doing = `replacing ${this.describe(key)} if its ETag is ${etag}`;
    const content = toBuffer(body);
    return this.replace(key, content, doing, async (target) => {
      const current = await this.currentEtag(target);
      if (current === undefined) {
        throw new PodminError('PRECONDITION_FAILED', `${doing}: it does not exist`);
      }
      if (!etagsEqual(current, etag)) {
        throw new PodminError('PRECONDITION_FAILED', `${doing}: its ETag is now ${current}`);
      }
    });
  }

  async put(key: string, body: Buffer | string): Promise<string> {
    assertLocalKey(key);
    return this.replace(key, toBuffer(body), `writing ${this.describe(key)}`, () =>
      Promise.resolve(),
    );
  }

  async head(key: string): Promise<ObjectHead> {
    assertLocalKey(key);
    return this.withObjectFile(
      key,
      `reading metadata of ${this.describe(key)}`,
      async (handle, stats) => ({
        etag: this.etags.lookup(stats) ?? this.etags.remember(stats, await hashFile(handle)),
        size: stats.size,
        lastModified: new Date(stats.mtimeMs),
      }),
    );
  }

  async openRead(key: string, options: OpenReadOptions = {}): Promise<OpenReadResult> {
    assertLocalKey(key);
    const doing = `opening ${this.describe(key)}`;
    const { range } = options;
    if (range !== undefined) assertValidRange(range, doing);
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      throw await this.openError(err, doing);
    }
    let handedOver = false;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        throw new PodminError(
          'OBJECT_NOT_FOUND',
          `${doing}: it does not exist (the path is a directory)`,
        );
      }
      const served =
        range === undefined ? { start: 0, end: stats.size - 1 } : resolveRange(range, stats.size);
      if (served === undefined) {
        return { kind: 'unsatisfiable', size: stats.size };
      }
      // The same ETag get and head report; hashed once per file version, then cached.
      const etag = this.etags.lookup(stats) ?? this.etags.remember(stats, await hashFile(handle));
      const body = new FileRangeBody(handle, served.start, served.end - served.start + 1, doing);
      handedOver = true;
      return { kind: 'opened', body, size: stats.size, ...served, etag };
    } catch (err) {
      throw err instanceof PodminError ? err : this.fsError(err, doing);
    } finally {
      if (!handedOver) await handle.close();
    }
  }

  async delete(key: string): Promise<void> {
    assertLocalKey(key);
    const doing = `deleting ${this.describe(key)}`;
    await this.assertBucket(doing);
    const target = this.pathOf(key);
    await this.withKeyLock(key, doing, async () => {
      try {
        await unlink(target);
      } catch (err) {
        // Absent, or a directory of longer keys (so no object by this name): nothing to delete.
        if (
          !['ENOENT', 'ENOTDIR', 'EISDIR', 'EPERM'].includes(errnoCode(err) ?? '') ||
          !(await notAFile(target))
        ) {
          throw this.fsError(err, doing);
        }
      }
    });
    await this.pruneEmptyParents(target);
  }

  async list(prefix: string, token?: string): Promise<ListPage> {
    const doing = `listing ${JSON.stringify(prefix)} in ${this.describeBucket()}`;
    await this.assertBucket(doing);
    const keys: string[] = [];
    try {
      for await (const key of this.walk(this.root, '', prefix, token)) {
        keys.push(key);
        if (keys.length > PAGE_SIZE) {
          break;
        }
      }
    } catch (err) {
      throw this.fsError(err, doing);
    }
    const pageKeys = keys.slice(0, PAGE_SIZE);
    const objects: ListedObject[] = [];
    for (const key of pageKeys) {
      const listed = await this.describeListed(key);
      if (listed !== undefined) {
        objects.push(listed);
      }
    }
    const last = pageKeys[pageKeys.length - 1];
    return keys.length > PAGE_SIZE && last !== undefined
      ? { objects, nextToken: last }
      : { objects };
  }

  private async describeListed(key: string): Promise<ListedObject | undefined> {
    try {
      return await this.withObjectFile(
        key,
        `listing ${this.describe(key)}`,
        async (handle, stats) => ({
          key,
          size: stats.size,
          etag: this.etags.lookup(stats) ?? this.etags.remember(stats, await hashFile(handle)),
          lastModified: new Date(stats.mtimeMs),
        }),
      );
    } catch (err) {
      // Deleted between the directory read and now: not part of this page.
      if (err instanceof PodminError && err.code === 'OBJECT_NOT_FOUND') {
        return undefined;
      }
      throw err;
    }
  }

  /** Yields keys under `dir` in S3 (UTF-8 byte) order, starting with `prefix`, after `token`. */
  private async *walk(
    dir: string,
    keyPrefix: string,
    prefix: string,
    token: string | undefined,
  ): AsyncGenerator<string> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (dir !== this.root && ['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) {
        return;
      }
      throw err;
    }
    // A directory sorts as "name/" so that "a-c" (0x2d) comes before "a/b" (0x2f), as in S3.
    const sorted = entries
      .filter(
        (e) =>
          !e.name.startsWith(LOCAL_TEMP_PREFIX) &&
          !(dir === this.root && e.name === LOCAL_LOCK_DIR),
      )
      .filter((e) => e.isFile() || e.isDirectory())
      .map((e) => ({ key: keyPrefix + e.name, isDirectory: e.isDirectory() }))
      .map((e) => ({ ...e, sortKey: e.isDirectory ? `${e.key}/` : e.key }))
      .sort((a, b) => compareKeys(a.sortKey, b.sortKey));
    for (const entry of sorted) {
      if (entry.isDirectory) {
        const dirKey = entry.sortKey;
        const mayMatchPrefix = dirKey.startsWith(prefix) || prefix.startsWith(dirKey);
        const entirelyBeforeToken =
          token !== undefined && compareKeys(token, dirKey) > 0 && !token.startsWith(dirKey);
        if (mayMatchPrefix && !entirelyBeforeToken) {
          yield* this.walk(path.join(dir, path.basename(entry.key)), dirKey, prefix, token);
        }
      } else if (
        entry.key.startsWith(prefix) &&
        (token === undefined || compareKeys(entry.key, token) > 0)
      ) {
        yield entry.key;
      }
    }
  }

  /** Writes `content` to a fresh temp file beside `key`'s path, fsynced, and returns its path. */
  private async writeTemp(key: string, content: Buffer, doing: string): Promise<string> {
    await this.assertBucket(doing);
    const dir = path.dirname(this.pathOf(key));
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
      } catch (err) {
        throw await this.writeError(err, key, doing);
      }
      const temp = path.join(dir, `${LOCAL_TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
      const started = this.now();
      let handle: FileHandle;
      try {
        handle = await open(temp, 'wx', 0o600);
      } catch (err) {
        // A concurrent delete may have removed the emptied directory after our mkdir.
        if (errnoCode(err) === 'ENOENT' && attempt < TEMP_CREATE_ATTEMPTS) {
          continue;
        }
        throw this.fsError(err, doing);
      }
      try {
        await handle.writeFile(content);
        const written = await handle.stat();
        const ended = this.now();
        await handle.sync();
        this.serverTime = { serverMs: written.mtimeMs, localMs: (started + ended) / 2 };
      } catch (err) {
        await handle.close().catch(() => undefined);
        await unlink(temp).catch(() => undefined);
        throw this.fsError(err, doing);
      }
      await handle.close();
      return temp;
    }
  }

  /** Publishes `content` at `key` by rename while holding its lock, after `check` passes. */
  private async replace(
    key: string,
    content: Buffer,
    doing: string,
    check: (target: string) => Promise<void>,
  ): Promise<string> {
    const target = this.pathOf(key);
    const temp = await this.writeTemp(key, content, doing);
    try {
      await this.withKeyLock(key, doing, async () => {
        await check(target);
        try {
          await rename(temp, target);
        } catch (err) {
          throw await this.writeError(err, key, doing);
        }
      });
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await fsyncDirectory(path.dirname(target));
    return md5Etag(content);
  }

  private withKeyLock<T>(key: string, doing: string, fn: () => Promise<T>): Promise<T> {
    const lockPath = path.join(
      this.root,
      LOCAL_LOCK_DIR,
      createHash('sha256').update(key).digest('hex'),
    );
    return withFileLock(lockPath, doing, fn, {
      timeoutMs: this.lockTimeoutMs,
      staleMs: this.staleLockMs,
      busyCode: 'BUCKET_UNAVAILABLE',
    });
  }

  /** The current ETag of the regular file at `target`, or undefined when there is none. */
  private async currentEtag(target: string): Promise<string | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(target, 'r');
    } catch (err) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) {
        return undefined;
      }
      throw err;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        return undefined;
      }
      return this.etags.lookup(stats) ?? this.etags.remember(stats, await hashFile(handle));
    } finally {
      await handle.close();
    }
  }

  /**
   * Opens the object's file and runs `fn` on it; OBJECT_NOT_FOUND when there is none. A
   * directory at the path is absent (the prefix of longer keys: S3 has no directories), but with
   * `directoryIsFault` an empty one is BUCKET_UNAVAILABLE: no bucket operation leaves an empty
   * directory (delete prunes them), so someone replaced the object by hand, and a whole-object
   * read must not pass that off as a clean "not found" to a reader that acts on absence (the
   * reconciler would take a vanished index for empty desired state).
   */
  private async withObjectFile<T>(
    key: string,
    doing: string,
    fn: (handle: FileHandle, stats: Stats) => Promise<T>,
    directoryIsFault = false,
  ): Promise<T> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      throw await this.openError(err, doing);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        throw directoryIsFault && (await readdir(this.pathOf(key)).catch(() => [''])).length === 0
          ? new PodminError(
              'BUCKET_UNAVAILABLE',
              `${doing}: ${this.pathOf(key)} is an empty directory, not an object file`,
            )
          : new PodminError(
              'OBJECT_NOT_FOUND',
              `${doing}: it does not exist (the path is a directory)`,
            );
      }
      return await fn(handle, stats);
    } catch (err) {
      // A cancelled read keeps the caller's abort reason rather than becoming a file-system failure.
      throw err instanceof PodminError || isAbortError(err) ? err : this.fsError(err, doing);
    } finally {
      await handle.close();
    }
  }

  /** Maps a failed open of an object's file: absent (in an existing bucket) is OBJECT_NOT_FOUND. */
  private async openError(err: unknown, doing: string): Promise<PodminError> {
    if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) {
      await this.assertBucket(doing);
      return new PodminError('OBJECT_NOT_FOUND', `${doing}: it does not exist`, { cause: err });
    }
    return this.fsError(err, doing);
  }

  private async pruneEmptyParents(target: string): Promise<void> {
    for (
      let dir = path.dirname(target);
      dir.startsWith(this.root + path.sep);
      dir = path.dirname(dir)
    ) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty, already gone, or not ours to remove: all fine
      }
    }
  }

  private async assertBucket(doing: string): Promise<void> {
    let stats: Stats;
    try {
      stats = await stat(this.root);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') {
        throw new PodminError(
          'BUCKET_UNAVAILABLE',
          `${doing}: the bucket directory ${this.root} does not exist`,
          {
            cause: err,
            hint: 'run `podmin connect --provider local` to create it',
          },
        );
      }
      throw this.fsError(err, doing);
    }
    if (!stats.isDirectory()) {
      throw new PodminError('BUCKET_UNAVAILABLE', `${doing}: ${this.root} is not a directory`);
    }
  }

  /** Maps a failed write: a key that collides with a file/directory of another key is the caller's error. */
  private async writeError(err: unknown, key: string, doing: string): Promise<PodminError> {
    const code = errnoCode(err);
    if (
      code === 'ENOTDIR' ||
      code === 'EISDIR' ||
      (code === 'EEXIST' && (await isDirectory(this.pathOf(key))))
    ) {
      return new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: the key collides with another key's path (a local bucket cannot hold both "a" and "a/b")`,
        { cause: err },
      );
    }
    if (code === 'EEXIST' || code === 'ENOENT') {
      return new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: the key collides with another key's path`,
        { cause: err },
      );
    }
    return this.fsError(err, doing);
  }

  private fsError(err: unknown, doing: string): PodminError {
    if (err instanceof PodminError) {
      return err;
    }
    const code = errnoCode(err);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      return new PodminError('ACCESS_DENIED', `${doing}: ${code} (permission denied)`, {
        cause: err,
      });
    }
    return new PodminError(
      'BUCKET_UNAVAILABLE',
      `${doing}: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    );
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...key.split('/'));
  }

  private describe(key: string): string {
    return describeObject(key, this.describeBucket());
  }

  private describeBucket(): string {
    return `local bucket ${this.root}`;
  }
}

/** ETags of published files by identity: published files are never modified in place. */
class EtagCache {
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
class FileRangeBody implements ObjectBody {
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

/** S3 lists keys in UTF-8 byte order, which differs from UTF-16 string order. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

async function readBounded(
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

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

async function hashFile(handle: FileHandle): Promise<string> {
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

async function fsyncDirectory(dir: string): Promise<void> {
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

async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isDirectory();
  } catch {
    return false;
  }
}

async function notAFile(file: string): Promise<boolean> {
  try {
    return !(await lstat(file)).isFile();
  } catch {
    return true;
  }
}

function toBuffer(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
