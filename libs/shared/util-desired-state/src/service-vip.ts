import { createHash } from 'node:crypto';

/** The spec's Service VIP prefix `fd50:6f64:6d69::/64` as its four 16-bit groups. */
const VIP_PREFIX_GROUPS = [0xfd50, 0x6f64, 0x6d69, 0x0000] as const;

/**
 * The deterministic ULA VIP of a Service: `fd50:6f64:6d69::/64` plus the first 64 bits of
 * SHA-512 over `cluster NUL namespace NUL name`, as canonical RFC 5952 text.
 */
export function serviceVip(cluster: string, namespace: string, name: string): string {
  const digest = createHash('sha512').update(`${cluster}\0${namespace}\0${name}`).digest();
  const groups: number[] = [...VIP_PREFIX_GROUPS];
  for (let i = 0; i < 8; i += 2) groups.push(digest.readUInt16BE(i));
  return formatIpv6Groups(groups);
}

/** Eight 16-bit groups as RFC 5952 text: lowercase, no leading zeros, longest zero run as `::`. */
export function formatIpv6Groups(groups: readonly number[]): string {
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new RangeError('an IPv6 address has eight 16-bit groups');
  }
  // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  const head = hex.slice(0, bestStart).join(':');
  const tail = hex.slice(bestStart + bestLength).join(':');
  return `${head}::${tail}`;
}
