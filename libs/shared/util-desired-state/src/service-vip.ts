import { createHash } from 'node:crypto';
import { formatIpv6 } from '@podmin/util-names';

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
  return formatIpv6(groups);
}
