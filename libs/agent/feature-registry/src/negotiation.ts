/** One media range of an Accept header with its quality. */
interface MediaRange {
  type: string;
  quality: number;
}

/**
 * True when a stored manifest of `mediaType` may be served to a client sending `accept`
 * (a comma-separated Accept header, possibly from several joined header lines). No Accept
 * header accepts anything, as do `*\/*` and `type/*`; `q=0` excludes a type.
 */
export function isAcceptable(
  mediaType: string,
  accept: string | readonly string[] | undefined,
): boolean {
  const header = Array.isArray(accept) ? accept.join(',') : (accept as string | undefined);
  if (header === undefined || header.trim() === '') {
    return true;
  }
  const ranges = parseAccept(header);
  if (ranges.length === 0) {
    return true;
  }
  const wanted = mediaType.toLowerCase();
  const [major] = wanted.split('/');
  // The most specific matching range decides (RFC 9110 section 12.5.1).
  const exact = ranges.find((r) => r.type === wanted);
  if (exact !== undefined) return exact.quality > 0;
  const sub = ranges.find((r) => r.type === `${major}/*`);
  if (sub !== undefined) return sub.quality > 0;
  const any = ranges.find((r) => r.type === '*/*');
  return any !== undefined && any.quality > 0;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [typePart = '', ...params] = part.split(';');
    const type = typePart.trim().toLowerCase();
    if (type === '' || !type.includes('/')) continue;
    let quality = 1;
    for (const param of params) {
      const [key = '', value = ''] = param.split('=').map((s) => s.trim());
      if (key.toLowerCase() === 'q') {
        const q = Number(value);
        quality = Number.isFinite(q) && q >= 0 && q <= 1 ? q : 1;
      }
    }
    ranges.push({ type, quality });
  }
  return ranges;
}
