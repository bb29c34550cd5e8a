// Moving a blob for bench/registry-pull.mjs: writing a random one, reading it through a bucket
// adapter as the registry does, and pulling it over HTTP with curl.
import { spawn } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import fs from 'node:fs';

const elapsed = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** Writes `bytes` random bytes to `file` in 4 MiB chunks (never all in memory); returns the hex sha256. */
export function writeRandomBlob(file, bytes) {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(4 * 1024 * 1024);
  for (let written = 0; written < bytes; written += chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, bytes - written));
    randomFillSync(part);
    hash.update(part);
    fs.writeSync(fd, part);
  }
  fs.closeSync(fd);
  return hash.digest('hex');
}

/** Reads the whole object through a registry adapter into one reused 1 MiB buffer, as the registry does. */
export async function directRead(store, key, bytes, withSha256 = false) {
  const start = process.hrtime.bigint();
  const opened = await store.openRead(key);
  const hash = withSha256 ? createHash('sha256') : undefined;
  const into = new Uint8Array(1024 * 1024);
  let read = 0;
  try {
    for (let n = await opened.body.read(into); n > 0; n = await opened.body.read(into)) {
      read += n;
      hash?.update(into.subarray(0, n));
    }
  } finally {
    await opened.body.close();
  }
  hash?.digest();
  if (read !== bytes) throw new Error(`direct read of ${key}: ${read} of ${bytes} bytes`);
  return { bytes: read, ms: elapsed(start) };
}

/** GETs `url` with curl, body discarded; checks status and size. */
export function curlGet(url, bytes) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const curl = spawn('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} %{size_download}',
      url,
    ]);
    let out = '';
    curl.stdout.on('data', (d) => (out += d));
    curl.on('error', reject);
    curl.on('close', (code) => {
      const ms = elapsed(start);
      const [status, size] = out.split(' ').map(Number);
      if (code !== 0 || status !== 200 || size !== bytes) {
        reject(
          new Error(`GET ${url}: curl exit ${code}, HTTP ${status}, ${size} of ${bytes} bytes`),
        );
      } else {
        resolve({ bytes: size, ms });
      }
    });
  });
}
