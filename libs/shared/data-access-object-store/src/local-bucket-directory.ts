import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, open, readdir, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { errnoCode } from '@podmin/util-fs';
import { describeObject } from './errors';
import { isAbortError } from './local-files';

/**
 * The directory of a local bucket: where each key's file lives, whether the bucket exists, and
 * how file-system failures read as PodminErrors (the store's one translation of errno codes).
 */
export class LocalBucketDirectory {
  /** The bucket directory, absolute. */
  readonly root: string;

  constructor(directory: string) {
    this.root = path.resolve(directory);
  }

  /** The file of `key`. */
  pathOf(key: string): string {
    return path.join(this.root, ...key.split('/'));
  }

  /** `key` in this bucket, for messages. */
  describe(key: string): string {
    return describeObject(key, this.describeBucket());
  }

  /** This bucket, for messages. */
  describeBucket(): string {
    return `local bucket ${this.root}`;
  }

  /** BUCKET_UNAVAILABLE unless the bucket directory exists. */
  async assertBucket(doing: string): Promise<void> {
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

  /**
   * Opens the object's file and runs `fn` on it; OBJECT_NOT_FOUND when there is none. A
   * directory at the path is absent (the prefix of longer keys: S3 has no directories), but with
   * `directoryIsFault` an empty one is BUCKET_UNAVAILABLE: no bucket operation leaves an empty
   * directory (delete prunes them), so someone replaced the object by hand, and a whole-object
   * read must not pass that off as a clean "not found" to a reader that acts on absence (the
   * reconciler would take a vanished index for empty desired state).
   */
  async withObjectFile<T>(
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
  async openError(err: unknown, doing: string): Promise<PodminError> {
    if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) {
      await this.assertBucket(doing);
      return new PodminError('OBJECT_NOT_FOUND', `${doing}: it does not exist`, { cause: err });
    }
    return this.fsError(err, doing);
  }

  /** Maps a failed write: a key that collides with a file/directory of another key is the caller's error. */
  async writeError(err: unknown, key: string, doing: string): Promise<PodminError> {
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

  /** Maps any other file-system failure: permissions are ACCESS_DENIED, the rest BUCKET_UNAVAILABLE. */
  fsError(err: unknown, doing: string): PodminError {
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

  /** Removes the directories above `target` that became empty, up to the bucket's root. */
  async pruneEmptyParents(target: string): Promise<void> {
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
}

/** Whether `file` is a directory (false when it cannot be read). */
export async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isDirectory();
  } catch {
    return false;
  }
}
