/** Parses an IPv6 address into eight 16-bit groups, or undefined when it is not one. */
export function parseIpv6(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:]+$/.test(text) || text.includes(':::')) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':');
    if (groups.some((g) => g.length === 0 || g.length > 4)) return undefined;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0] as string);
  const tail = halves.length === 2 ? parse(halves[1] as string) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** RFC 5952 canonical text of eight groups: lowercase, no leading zeros, longest zero run (≥2) compressed. */
export function formatIpv6(groups: readonly number[]): string {
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new RangeError('an IPv6 address has eight 16-bit groups');
  }
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  const head = hex.slice(0, bestStart).join(':');
  const tail = hex.slice(bestStart + bestLen).join(':');
  return `${head}::${tail}`;
}

/**
 * Whether `address` (or a prefix's first address, `a:b::/n`) lies inside `prefix` (`a:b::/n`).
 * False when either does not parse or the prefix length is not 0 to 128.
 */
export function inIpv6Prefix(address: string, prefix: string): boolean {
  const [net, lengthText] = prefix.split('/');
  const length = Number(lengthText);
  const a = parseIpv6(address.split('/')[0] ?? '');
  const p = parseIpv6(net ?? '');
  if (!a || !p || !Number.isInteger(length) || length < 0 || length > 128) return false;
  for (let bit = 0; bit < length; bit += 16) {
    const take = Math.min(16, length - bit);
    const mask = (0xffff << (16 - take)) & 0xffff;
    const i = bit / 16;
    if (((a[i] as number) & mask) !== ((p[i] as number) & mask)) return false;
  }
  return true;
}
