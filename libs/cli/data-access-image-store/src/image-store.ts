import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import type { Readable, TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import {
  LAYOUT_INDEX_FILE,
  MAX_LAYOUT_INDEX_BYTES,
  OCI_LAYOUT_FILE,
  blobPath,
  createDigester,
  emptyLayoutIndex,
  findByDigest,
  findTagged,
  ociLayoutContent,
  parseDigest,
  parseImageIndex,
  serializeLayoutIndex,
  withTag,
  withUntagged,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex, QualifiedReference, TagUpdate } from '@podmin/util-oci';
import { syncDir, tempName, withFileLock, writeFileAtomic } from '@podmin/util-fs';
import { CorruptBlobError } from './errors';

/** Folder of the store beneath the CLI cache directory. */
export const IMAGE_STORE_DIR = 'oci';

/** Whether a blob is in the store with the right bytes. */
export type BlobState = 'present' | 'missing' | 'corrupt';

/** Digest and size of a blob written to the store. */
export interface WrittenBlob {
  /** `sha256:<hex>` of the content. */
  digest: string;
  /** Exact size in bytes. */
  size: number;
}

/**
 * The CLI's local image store: one OCI image layout per repository at
 * `<root>/<registry>/<repository>/` (`oci-layout`, `index.json`, `blobs/sha256/<hex>`), tags as
 * `org.opencontainers.image.ref.name` annotations, as ocimage and Zot keep theirs. Every write
 * is atomic (temp file, fsync, rename); every read is digest-verified. Temporary files live in
 * `<root>/.tmp` and index locks in `<root>/.locks`, outside any layout.
 */
export class LocalImageStore {
  constructor(readonly root: string) {}

  /** The store inside a CLI cache directory: `<cache>/oci`. */
  static inCache(cacheDir: string): LocalImageStore {
    return new LocalImageStore(path.join(cacheDir, IMAGE_STORE_DIR));
  }

  /** The store repository of a qualified reference: `<registry>/<repository>`. */
  repositoryOf(ref: QualifiedReference): string {
    return `${ref.registry}/${ref.repository}`;
  }

  /** Directory of a repository's layout. */
  layoutDir(repository: string): string {
    const parts = repository.split('/');
    if (
      parts.length < 2 ||
      parts.some(
        (p) => p === '' || p === '.' || p === '..' || p.startsWith('.') || /[\\\0]/.test(p),
      )
    ) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `opening image store repository ${JSON.stringify(repository)}: must be <registry>/<repository>`,
      );
    }
    return path.join(this.root, ...parts);
  }

  /** Path of a blob's file (whether or not it exists). */
  blobFile(repository: string, digest: string): string {
    return path.join(this.layoutDir(repository), blobPath(digest));
  }

  /** Directory for temporary files on the store's filesystem. */
  tempDir(): string {
    return path.join(this.root, '.tmp');
  }

  /** The repository's layout index; an empty index when the layout does not exist yet. */
  async readIndex(repository: string): Promise<ImageIndex> {
    const file = path.join(this.layoutDir(repository), LAYOUT_INDEX_FILE);
    let bytes: Buffer;
    try {
      const info = await stat(file);
      if (info.size > MAX_LAYOUT_INDEX_BYTES) {
        throw new PodminError(
          'IO_ERROR',
          `reading ${file}: ${info.size} bytes is over the ${MAX_LAYOUT_INDEX_BYTES}-byte limit`,
        );
      }
      bytes = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyLayoutIndex();
      throw err;
    }
    return parseImageIndex(bytes, file);
  }

  /** The top-level descriptor a reference names (by digest when it has one, else by tag). */
  async resolve(ref: QualifiedReference): Promise<Descriptor | undefined> {
    const index = await this.readIndex(this.repositoryOf(ref));
    if (ref.digest !== undefined) return findByDigest(index, ref.digest);
    return ref.tag === undefined ? undefined : findTagged(index, ref.tag);
  }

  /** Hashes a stored blob: present with the right digest (and size, when given), missing, or corrupt. */
  async blobState(repository: string, digest: string, size?: number): Promise<BlobState> {
    const file = this.blobFile(repository, digest);
    try {
      const info = await stat(file);
      if (size !== undefined && info.size !== size) return 'corrupt';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw err;
    }
    const digester = createDigester(parseDigest(digest).algorithm);
    for await (const chunk of createReadStream(file)) digester.update(chunk as Buffer);
    return digester.digest() === digest ? 'present' : 'corrupt';
  }

  /**
   * Reads a whole blob, verified against its digest (and `size` when given); OBJECT_NOT_FOUND
   * when absent, CorruptBlobError when the bytes are wrong, IO_ERROR over `maxBytes`.
   */
  async readBlob(
    repository: string,
    digest: string,
    options: { maxBytes: number; size?: number },
  ): Promise<Buffer> {
    const file = this.blobFile(repository, digest);
    let bytes: Buffer;
    try {
      const info = await stat(file);
      if (info.size > options.maxBytes) {
        throw new PodminError(
          'IO_ERROR',
          `reading blob ${digest}: ${info.size} bytes is over the ${options.maxBytes}-byte limit`,
        );
      }
      bytes = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new PodminError(
          'OBJECT_NOT_FOUND',
          `reading blob ${digest} of ${repository}: not in the image store`,
        );
      }
      throw err;
    }
    const { algorithm } = parseDigest(digest);
    const actual = `${algorithm}:${createHash(algorithm).update(bytes).digest('hex')}`;
    if (actual !== digest || (options.size !== undefined && bytes.length !== options.size)) {
      throw new CorruptBlobError(
        digest,
        `reading blob ${digest} of ${repository}: the stored bytes hash to ${actual} (${bytes.length} bytes)`,
        { hint: 'pull the image again to repair the store' },
      );
    }
    return bytes;
  }

  /** Streams a blob; the stream fails with CorruptBlobError at its end when the bytes are wrong. */
  openBlob(repository: string, digest: string, size?: number): Readable {
    const verify = new VerifyingTransform(repository, digest, size);
    const source = createReadStream(this.blobFile(repository, digest));
    source.on('error', (err) => verify.destroy(err));
    return source.pipe(verify);
  }

  /** Writes a blob atomically and returns its digest; CorruptBlobError when `expected` differs. */
  async writeBlob(repository: string, bytes: Buffer, expected?: string): Promise<WrittenBlob> {
    const algorithm = expected === undefined ? 'sha256' : parseDigest(expected).algorithm;
    const digest = `${algorithm}:${createHash(algorithm).update(bytes).digest('hex')}`;
    if (expected !== undefined && digest !== expected) {
      throw new CorruptBlobError(
        expected,
        `storing blob ${expected}: the content hashes to ${digest}`,
      );
    }
    await writeFileAtomic(this.blobFile(repository, digest), bytes, {
      tempDir: this.tempDir(),
      mode: 0o644,
      dirMode: 0o755,
    });
    return { digest, size: bytes.length };
  }

  /**
   * Streams `source` into the store as blob `expected.digest`, verifying digest and size before
   * the atomic rename; nothing is stored when they differ (CorruptBlobError).
   */
  async writeBlobStream(
    repository: string,
    source: Readable,
    expected: { digest: string; size?: number },
  ): Promise<void> {
    await mkdir(this.tempDir(), { recursive: true });
    const temp = tempName(this.tempDir(), 'blob');
    const verify = new VerifyingTransform(
      `download of ${repository}`,
      expected.digest,
      expected.size,
    );
    try {
      await pipeline(source, verify, createWriteStream(temp, { flags: 'wx', mode: 0o644 }));
      const handle = await open(temp, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.adoptFile(repository, temp, expected.digest);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** Moves a finished temporary file (on the store's filesystem) into place as blob `digest`. */
  async adoptFile(repository: string, file: string, digest: string): Promise<void> {
    const target = this.blobFile(repository, digest);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(file, target);
    await syncDir(path.dirname(target));
  }

  /** Makes a verified blob of one repository available in another (hard link, else copy). */
  async copyBlob(from: string, to: string, digest: string, size?: number): Promise<void> {
    if ((await this.blobState(to, digest, size)) === 'present') return;
    const state = await this.blobState(from, digest, size);
    if (state !== 'present') {
      throw new CorruptBlobError(digest, `copying blob ${digest} from ${from}: it is ${state}`, {
        hint: 'pull the base image again to repair the store',
      });
    }
    const target = this.blobFile(to, digest);
    await mkdir(this.tempDir(), { recursive: true });
    await mkdir(path.dirname(target), { recursive: true });
    const temp = tempName(this.tempDir(), 'link');
    try {
      await link(this.blobFile(from, digest), temp).catch(() =>
        copyFile(this.blobFile(from, digest), temp),
      );
      await rename(temp, target);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /**
   * Changes a repository's `index.json` under an exclusive lock: writes `oci-layout` when
   * missing, applies `change` to the current index and writes the result atomically.
   */
  async updateIndex(
    repository: string,
    change: (current: ImageIndex) => ImageIndex,
  ): Promise<ImageIndex> {
    const dir = this.layoutDir(repository);
    const lockName = createHash('sha256').update(repository).digest('hex');
    return withFileLock(
      path.join(this.root, '.locks', lockName),
      `updating the index of ${repository}`,
      async () => {
        const layoutFile = path.join(dir, OCI_LAYOUT_FILE);
        try {
          await stat(layoutFile);
        } catch {
          await writeFileAtomic(layoutFile, ociLayoutContent(), {
            tempDir: this.tempDir(),
            mode: 0o644,
            dirMode: 0o755,
          });
        }
        const next = change(await this.readIndex(repository));
        await writeFileAtomic(path.join(dir, LAYOUT_INDEX_FILE), serializeLayoutIndex(next), {
          tempDir: this.tempDir(),
          mode: 0o644,
          dirMode: 0o755,
        });
        return next;
      },
      { timeoutMs: 30_000, staleMs: 60_000 },
    );
  }

  /** Points `update.tag` at an image whose blobs are already stored (see util-oci `withTag`). */
  tag(repository: string, update: TagUpdate): Promise<ImageIndex> {
    return this.updateIndex(repository, (index) => withTag(index, update));
  }

  /** Records an image by digest only (no tag). */
  addUntagged(repository: string, descriptors: readonly Descriptor[]): Promise<ImageIndex> {
    return this.updateIndex(repository, (index) => withUntagged(index, descriptors));
  }
}

/** Passes bytes through while hashing them; fails at the end on a digest or size mismatch. */
class VerifyingTransform extends Transform {
  private readonly digester;
  private bytes = 0;

  constructor(
    private readonly what: string,
    private readonly digest: string,
    private readonly size: number | undefined,
  ) {
    super();
    this.digester = createDigester(parseDigest(digest).algorithm);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.size !== undefined && this.bytes > this.size) {
      callback(this.mismatch(`more than the expected ${this.size} bytes`));
      return;
    }
    this.digester.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const actual = this.digester.digest();
    if (this.size !== undefined && this.bytes !== this.size) {
      callback(this.mismatch(`${this.bytes} bytes instead of ${this.size}`));
    } else if (actual !== this.digest) {
      callback(this.mismatch(`the bytes hash to ${actual}`));
    } else {
      callback();
    }
  }

  private mismatch(why: string): CorruptBlobError {
    return new CorruptBlobError(
      this.digest,
      `verifying blob ${this.digest} (${this.what}): ${why}`,
    );
  }
}
