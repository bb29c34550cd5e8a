import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { PodminError } from '@podmin/util-errors';
import { createDigester, parseDigest } from '@podmin/util-oci';
import type { DesiredFile } from '@podmin/util-dependencies';
import { describeFetchError, type FetchFunction } from './http';

/** The narrow output port the cache reports through (the CLI's Reporter fits). */
export interface ProgressSink {
  info(message: string): void;
  /** One transfer's progress; `unit` is what done and total count (the CLI's Reporter: items). */
  progress(label: string, done: number, total: number, unit?: 'bytes' | 'items'): void;
}

/** A desired file present and verified in the local cache. */
export interface CachedFile {
  file: DesiredFile;
  /** Absolute path of the verified file. */
  localPath: string;
  /** Exact size in bytes. */
  size: number;
}

/** Options of {@link DownloadCache}. */
export interface DownloadCacheOptions {
  /** `<podmin cache>/downloads`. */
  dir: string;
  /** Downloads in flight at once (4). */
  concurrency?: number;
  /** Tries per file before giving up (3). */
  attempts?: number;
  /** Per-request timeout in milliseconds (10 minutes). */
  timeoutMs?: number;
  fetch?: FetchFunction;
  reporter?: ProgressSink;
}

const PROGRESS_STEP = 4 * 1024 * 1024;

/**
 * A download cache under `<cache>/downloads/<name>/<object file name>`: every file is checked
 * against its publisher digest (and size, when known) before reuse, corrupt files are replaced,
 * downloads go to a temporary file renamed only after verification, and at most `concurrency`
 * transfers run at once.
 */
export class DownloadCache {
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly fetchImpl: FetchFunction;

  constructor(private readonly options: DownloadCacheOptions) {
    this.limit = pLimit(options.concurrency ?? 4);
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** Where `file` lives in the cache. */
  localPath(file: DesiredFile): string {
    return path.join(this.options.dir, file.name, path.posix.basename(file.path));
  }

  /** Ensures every file is cached and valid, with bounded concurrency. */
  ensureAll(files: readonly DesiredFile[]): Promise<CachedFile[]> {
    return Promise.all(files.map((file) => this.limit(() => this.ensure(file))));
  }

  /** Ensures one file is cached and valid: reuses it, repairs it or downloads it. */
  async ensure(file: DesiredFile): Promise<CachedFile> {
    const target = this.localPath(file);
    const existing = await verifyFile(target, file);
    if (existing.status === 'valid') return { file, localPath: target, size: existing.size };
    if (existing.status === 'corrupt') {
      this.options.reporter?.info(`repairing ${file.name} (${file.arch}): ${existing.why}`);
      await rm(target, { force: true });
    }
    await mkdir(path.dirname(target), { recursive: true });
    const attempts = this.options.attempts ?? 3;
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const size = await this.download(file, target);
        return { file, localPath: target, size };
      } catch (err) {
        lastError = err;
        if (attempt < attempts) {
          this.options.reporter?.info(
            `retrying ${file.name} (${file.arch}) after attempt ${attempt}: ${(err as Error).message}`,
          );
        }
      }
    }
    throw new PodminError(
      'IO_ERROR',
      `downloading ${file.name} ${file.version} for ${file.arch}: ${attempts} attempts failed; last: ${(lastError as Error).message}`,
      {
        cause: lastError,
        hint: 'Retry; a file that keeps failing verification was changed upstream.',
      },
    );
  }

  private async download(file: DesiredFile, target: string): Promise<number> {
    const temp = `${target}.part-${randomBytes(6).toString('hex')}`;
    const label = `downloading ${file.name} ${file.version} (${file.arch})`;
    const digester = createDigester(parseDigest(file.digest).algorithm);
    const handle = await open(temp, 'wx', 0o644);
    let size = 0;
    try {
      const { chunks, declared } = await this.openSource(file);
      const total = file.size ?? declared ?? 0;
      let reported = 0;
      this.options.reporter?.progress(label, 0, total, 'bytes');
      for await (const chunk of chunks) {
        digester.update(chunk);
        await handle.write(chunk);
        size += chunk.length;
        if (size - reported >= PROGRESS_STEP) {
          reported = size;
          this.options.reporter?.progress(label, size, Math.max(total, size), 'bytes');
        }
      }
      await handle.sync();
      if (declared !== undefined && size !== declared) {
        throw new Error(`truncated: received ${size} of ${declared} bytes`);
      }
      if (file.size !== undefined && size !== file.size) {
        throw new Error(`size is ${size} bytes, the publisher lists ${file.size}`);
      }
      const actual = digester.digest();
      if (actual !== file.digest) {
        throw new Error(`digest mismatch: expected ${file.digest}, got ${actual}`);
      }
      this.options.reporter?.progress(label, size, size, 'bytes');
    } catch (err) {
      await handle.close();
      await rm(temp, { force: true });
      throw err;
    }
    await handle.close();
    await rename(temp, target);
    return size;
  }

  private async openSource(
    file: DesiredFile,
  ): Promise<{ chunks: AsyncIterable<Uint8Array>; declared: number | undefined }> {
    const url = new URL(file.url);
    if (url.protocol === 'file:') {
      const local = fileURLToPath(url);
      return { chunks: createReadStream(local), declared: (await stat(local)).size };
    }
    let response: Response;
    try {
      response = await this.fetchImpl(file.url, {
        redirect: 'follow',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10 * 60_000),
      });
    } catch (err) {
      throw new Error(`GET ${file.url}: ${describeFetchError(err)}`, { cause: err });
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new Error(`GET ${file.url}: HTTP ${response.status}`);
    }
    const length = response.headers.get('content-length');
    const body = response.body;
    return {
      chunks: readChunks(body, file.url),
      declared: length === null ? undefined : Number(length),
    };
  }
}

async function* readChunks(
  body: ReadableStream<Uint8Array>,
  url: string,
): AsyncIterable<Uint8Array> {
  const reader = body.getReader();
  for (;;) {
    let part: ChunkRead;
    try {
      part = await reader.read();
    } catch (err) {
      throw new Error(`reading ${url}: ${describeFetchError(err)}`, { cause: err });
    }
    if (part.done || part.value === undefined) return;
    yield part.value;
  }
}

type Verification =
  { status: 'valid'; size: number } | { status: 'missing' } | { status: 'corrupt'; why: string };

/** Checks a cached file against the desired digest and size. */
async function verifyFile(target: string, file: DesiredFile): Promise<Verification> {
  let size: number;
  try {
    size = (await stat(target)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    throw err;
  }
  if (file.size !== undefined && size !== file.size) {
    return { status: 'corrupt', why: `size ${size}, expected ${file.size}` };
  }
  const digester = createDigester(parseDigest(file.digest).algorithm);
  for await (const chunk of createReadStream(target)) digester.update(chunk as Buffer);
  const actual = digester.digest();
  return actual === file.digest
    ? { status: 'valid', size }
    : {
        status: 'corrupt',
        why: `digest ${actual.slice(0, 19)}…, expected ${file.digest.slice(0, 19)}…`,
      };
}

/** One read of a response body stream (the web stream types are not in this lib set). */
interface ChunkRead {
  done: boolean;
  value?: Uint8Array;
}
