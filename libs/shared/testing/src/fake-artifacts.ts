import { createHash } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';

// The bytes the fake upstreams serve: deterministic artifacts, their digests and real tar.gz
// archives, so a test can predict every download and checksum.

/** Deterministic artifact bytes, large enough to cross a progress step. */
export function artifact(label: string, bytes = 64 * 1024): Buffer {
  const seed = Buffer.from(`${label}\n`);
  return Buffer.concat(Array.from({ length: Math.ceil(bytes / seed.length) }, () => seed)).subarray(
    0,
    bytes,
  );
}

/** A gzip-compressed tar of regular files (mode 0644), in the given order. */
export async function targz(files: Record<string, string>): Promise<Buffer> {
  const tar = pack();
  for (const [name, text] of Object.entries(files)) tar.entry({ name, mode: 0o644 }, text);
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The hex digest of `body`, as the upstreams' checksum files and listings carry it. */
export function hexDigest(algorithm: 'sha256' | 'sha512', body: Buffer): string {
  return createHash(algorithm).update(body).digest('hex');
}
