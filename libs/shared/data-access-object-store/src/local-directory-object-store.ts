import { createHash, randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { errnoCode, withFileLock } from '@podmin/util-fs';
import { ObjectTooLargeError } from './errors';
import { etagsEqual, md5Etag } from './etag';
import { assertValidRange, resolveRange } from './byte-range';
import { LocalBucketDirectory, isDirectory } from './local-bucket-directory';
import {
  EtagCache,
  FileRangeBody,
  fsyncDirectory,
  hashFile,
  notAFile,
  readBounded,
  toBuffer,
} from './local-files';
import { LOCAL_LOCK_DIR, LOCAL_TEMP_PREFIX, assertLocalKey, walkKeys } from './local-keys';
import type {
  ConditionalGetResult,
  GetOptions,
  ListPage,
  ListedObject,
  ObjectHead,
  ObjectStore,
  OpenReadOptions,
  OpenReadResult,
  ServerTimeSample,
  StoredObject,
} from './object-store.port';
import { DEFAULT_MAX_READ_BYTES } from './object-store.port';

// Moved to their own modules; exported here too, as before.
export { LOCAL_LOCK_DIR, LOCAL_TEMP_PREFIX, assertLocalKey, compareKeys } from './local-keys';

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
const ETAG_CACHE_ENTRIES = 10_000;
const TEMP_CREATE_ATTEMPTS = 3;

/**
 * A bucket that is a directory: each object is the file at its key path, so it can be
 * inspected with ordinary tools. Writes go to a temporary file in the same directory, are
 * fsynced, then published by link (create-only) or rename (replace); replacing writes and
 * deletes hold a per-key lock file so compare-and-swap is safe across processes. The server's
 * time is the modification time the kernel gave the last file written.
 */
export class LocalDirectoryObjectStore implements ObjectStore {
  private readonly dir: LocalBucketDirectory;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly etags = new EtagCache(ETAG_CACHE_ENTRIES);
  private readonly now: () => number;
  private serverTime: ServerTimeSample | undefined;

  constructor(directory: string, options: LocalDirectoryObjectStoreOptions = {}) {
    this.dir = new LocalBucketDirectory(directory);
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
    return this.readObject(key, options, '', async (handle, stats, maxBytes, doing) => {
      const body = await readBounded(handle, stats.size, maxBytes, doing, options.signal);
      return { body, etag: this.etags.remember(stats, md5Etag(body)) };
    });
  }

  async getIfChanged(
    key: string,
    etag: string,
    options: GetOptions = {},
  ): Promise<ConditionalGetResult> {
    return this.readObject(key, options, ' if changed', async (handle, stats, maxBytes, doing) => {
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
    });
  }

  /**
   * A bounded read of the object file (`get`, `getIfChanged`): the key checked, the caller's
   * abort honoured and the size cap resolved first; an empty directory in the object's place is
   * a bucket fault, not a missing object.
   */
  private readObject<T>(
    key: string,
    options: GetOptions,
    condition: string,
    read: (handle: FileHandle, stats: Stats, maxBytes: number, doing: string) => Promise<T>,
  ): Promise<T> {
    assertLocalKey(key);
    const doing = `reading ${this.dir.describe(key)}${condition}`;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
    options.signal?.throwIfAborted();
    return this.dir.withObjectFile(
      key,
      doing,
      (handle, stats) => read(handle, stats, maxBytes, doing),
      true,
    );
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    assertLocalKey(key);
    const doing = `creating ${this.dir.describe(key)}`;
    const content = toBuffer(body);
    const target = this.dir.pathOf(key);
    const temp = await this.writeTemp(key, content, doing);
    try {
      await link(temp, target);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST' && !(await isDirectory(target))) {
        throw new PodminError('PRECONDITION_FAILED', `${doing}: it already exists`, { cause: err });
      }
      throw await this.dir.writeError(err, key, doing);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await fsyncDirectory(path.dirname(target));
    return md5Etag(content);
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    assertLocalKey(key);
    const doing = `replacing ${this.dir.describe(key)} if its ETag is ${etag}`;
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
    return this.replace(key, toBuffer(body), `writing ${this.dir.describe(key)}`, () =>
      Promise.resolve(),
    );
  }

  async head(key: string): Promise<ObjectHead> {
    assertLocalKey(key);
    return this.dir.withObjectFile(
      key,
      `reading metadata of ${this.dir.describe(key)}`,
      async (handle, stats) => ({
        etag: this.etags.lookup(stats) ?? this.etags.remember(stats, await hashFile(handle)),
        size: stats.size,
        lastModified: new Date(stats.mtimeMs),
      }),
    );
  }

  async openRead(key: string, options: OpenReadOptions = {}): Promise<OpenReadResult> {
    assertLocalKey(key);
    const doing = `opening ${this.dir.describe(key)}`;
    const { range } = options;
    if (range !== undefined) assertValidRange(range, doing);
    let handle: FileHandle;
    try {
      handle = await open(this.dir.pathOf(key), 'r');
    } catch (err) {
      throw await this.dir.openError(err, doing);
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
      throw err instanceof PodminError ? err : this.dir.fsError(err, doing);
    } finally {
      if (!handedOver) await handle.close();
    }
  }

  async delete(key: string): Promise<void> {
    assertLocalKey(key);
    const doing = `deleting ${this.dir.describe(key)}`;
    await this.dir.assertBucket(doing);
    const target = this.dir.pathOf(key);
    await this.withKeyLock(key, doing, async () => {
      try {
        await unlink(target);
      } catch (err) {
        // Absent, or a directory of longer keys (so no object by this name): nothing to delete.
        if (
          !['ENOENT', 'ENOTDIR', 'EISDIR', 'EPERM'].includes(errnoCode(err) ?? '') ||
          !(await notAFile(target))
        ) {
          throw this.dir.fsError(err, doing);
        }
      }
    });
    await this.dir.pruneEmptyParents(target);
  }

  async list(prefix: string, token?: string): Promise<ListPage> {
    const doing = `listing ${JSON.stringify(prefix)} in ${this.dir.describeBucket()}`;
    await this.dir.assertBucket(doing);
    const keys: string[] = [];
    try {
      for await (const key of walkKeys(this.dir.root, this.dir.root, '', prefix, token)) {
        keys.push(key);
        if (keys.length > PAGE_SIZE) {
          break;
        }
      }
    } catch (err) {
      throw this.dir.fsError(err, doing);
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
      return await this.dir.withObjectFile(
        key,
        `listing ${this.dir.describe(key)}`,
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

  /** Writes `content` to a fresh temp file beside `key`'s path, fsynced, and returns its path. */
  private async writeTemp(key: string, content: Buffer, doing: string): Promise<string> {
    await this.dir.assertBucket(doing);
    const dir = path.dirname(this.dir.pathOf(key));
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
      } catch (err) {
        throw await this.dir.writeError(err, key, doing);
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
        throw this.dir.fsError(err, doing);
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
        throw this.dir.fsError(err, doing);
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
    const target = this.dir.pathOf(key);
    const temp = await this.writeTemp(key, content, doing);
    try {
      await this.withKeyLock(key, doing, async () => {
        await check(target);
        try {
          await rename(temp, target);
        } catch (err) {
          throw await this.dir.writeError(err, key, doing);
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
      this.dir.root,
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
}
