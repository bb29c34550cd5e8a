import { createHash } from 'node:crypto';

/** The S3 single-part ETag of `body`: its hex MD5 in double quotes. */
export function md5Etag(body: Buffer | string): string {
  return `"${createHash('md5').update(body).digest('hex')}"`;
}

/** True when two entity tags name the same content, ignoring quotes and a weak `W/` marker. */
export function etagsEqual(a: string, b: string): boolean {
  return normalizeEtag(a) === normalizeEtag(b);
}

function normalizeEtag(etag: string): string {
  const strong = etag.startsWith('W/') ? etag.slice(2) : etag;
  return strong.length >= 2 && strong.startsWith('"') && strong.endsWith('"')
    ? strong.slice(1, -1)
    : strong;
}
