import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { createDigester } from '@podmin/util-oci';

/** One entry of a layer tar. */
export interface LayerEntry {
  /** Path in the image without a leading `/` (directories without a trailing `/`). */
  path: string;
  /** Entry type. */
  type: 'file' | 'directory' | 'symlink';
  /** Permission bits (0o7777 mask). */
  mode: number;
  /** Owner uid. */
  uid: number;
  /** Owner gid. */
  gid: number;
  /** File size in bytes (files only). */
  size: number;
  /** Absolute path of the file to read (files only). */
  source?: string;
  /** Target of a symlink. */
  linkname?: string;
}

/** A finished layer: compressed digest and size, and the uncompressed diff id. */
export interface WrittenLayer {
  /** `sha256:` of the gzip bytes (the blob digest). */
  digest: string;
  /** Gzip size in bytes. */
  size: number;
  /** `sha256:` of the uncompressed tar (the config's `rootfs.diff_ids` entry). */
  diffId: string;
}

/** zlib compression level of every layer: fixed so equal inputs give equal bytes. */
export const LAYER_GZIP_LEVEL = 6;
/** The gzip header every layer starts with: no name, mtime 0, XFL 0, OS 255 (unknown). */
export const LAYER_GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);

/**
 * Writes a deterministic gzip-compressed tar layer to `file`: entries sorted by path, mtime 0,
 * empty user/group names, ownership and mode as given, and a fixed gzip header (zlib writes
 * the build host's OS code in byte 9, which is replaced by 255 as Go's gzip writes).
 */
export async function writeLayer(
  entries: readonly LayerEntry[],
  file: string,
): Promise<WrittenLayer> {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const tar = pack();
  const diff = createDigester('sha256');
  const blob = createDigester('sha256');
  let size = 0;
  let headerPatched = false;
  const hashTar = new Transform({
    transform(chunk: Buffer, _e, callback: TransformCallback) {
      diff.update(chunk);
      callback(null, chunk);
    },
  });
  const fixHeader = new Transform({
    transform(chunk: Buffer, _e, callback: TransformCallback) {
      let out = chunk;
      if (!headerPatched) {
        // zlib emits the 10-byte header in the first chunk.
        if (chunk.length < LAYER_GZIP_HEADER.length) {
          callback(new Error('writing a layer: zlib split the gzip header'));
          return;
        }
        out = Buffer.from(chunk);
        out[8] = LAYER_GZIP_HEADER[8] ?? 0;
        out[9] = LAYER_GZIP_HEADER[9] ?? 0xff;
        out.fill(0, 4, 8);
        headerPatched = true;
      }
      blob.update(out);
      size += out.length;
      callback(null, out);
    },
  });
  const written = pipeline(
    tar,
    hashTar,
    createGzip({ level: LAYER_GZIP_LEVEL }),
    fixHeader,
    createWriteStream(file, { flags: 'wx', mode: 0o644 }),
  );
  const feeding = (async () => {
    for (const entry of sorted) {
      const header = {
        name: entry.type === 'directory' ? `${entry.path}/` : entry.path,
        mode: entry.mode & 0o7777,
        uid: entry.uid,
        gid: entry.gid,
        uname: '',
        gname: '',
        mtime: new Date(0),
        type: entry.type,
        size: entry.type === 'file' ? entry.size : 0,
        ...(entry.linkname !== undefined ? { linkname: entry.linkname } : {}),
      };
      if (entry.type === 'file' && entry.source !== undefined) {
        const source = entry.source;
        await new Promise<void>((resolve, reject) => {
          const sink = tar.entry(header, (err) => (err ? reject(err) : resolve()));
          pipeline(createReadStream(source), sink).catch(reject);
        });
      } else {
        await new Promise<void>((resolve, reject) =>
          tar.entry(header, (err) => (err ? reject(err) : resolve())),
        );
      }
    }
    tar.finalize();
  })();
  feeding.catch((err: unknown) => tar.destroy(err as Error));
  await Promise.all([written, feeding]);
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { digest: blob.digest(), size, diffId: diff.digest() };
}
