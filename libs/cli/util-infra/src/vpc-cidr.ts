import type { FieldProblem } from '@podmin/util-errors';

/** Prefix lengths AWS accepts for a VPC's primary IPv4 CIDR. */
export const VPC_PREFIX_RANGE = { min: 16, max: 28 } as const;

const OCTET = /^(?:0|[1-9]\d{0,2})$/;
const INTEGER = /^(?:0|[1-9]\d*)$/;

const PRIVATE_RANGES: ReadonlyArray<{ base: number; prefix: number; text: string }> = [
  { base: ipv4(10, 0, 0, 0), prefix: 8, text: '10.0.0.0/8' },
  { base: ipv4(172, 16, 0, 0), prefix: 12, text: '172.16.0.0/12' },
  { base: ipv4(192, 168, 0, 0), prefix: 16, text: '192.168.0.0/16' },
];

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.');
}

/**
 * Checks a `--vpc-cidr` value: a private IPv4 network (inside 10.0.0.0/8, 172.16.0.0/12 or
 * 192.168.0.0/16) with a /16 to /28 prefix, written as its network address. Returns the
 * problems found (empty when valid).
 */
export function vpcCidrProblems(value: string): FieldProblem[] {
  const field = '--vpc-cidr';
  const allowed = `a private IPv4 CIDR inside ${PRIVATE_RANGES.map((r) => r.text).join(', ')} with a prefix from /${VPC_PREFIX_RANGE.min} to /${VPC_PREFIX_RANGE.max}, e.g. 10.0.0.0/16`;
  const [address, prefixText, ...rest] = value.split('/');
  const octets = (address ?? '').split('.');
  if (
    rest.length > 0 ||
    prefixText === undefined ||
    !INTEGER.test(prefixText) ||
    octets.length !== 4 ||
    !octets.every((o) => OCTET.test(o) && Number(o) <= 255)
  ) {
    return [{ field, message: `${JSON.stringify(value)} is not ${allowed}` }];
  }
  const prefix = Number(prefixText);
  const [a, b, c, d] = octets.map(Number) as [number, number, number, number];
  const base = ipv4(a, b, c, d);
  if (prefix < VPC_PREFIX_RANGE.min || prefix > VPC_PREFIX_RANGE.max) {
    return [
      {
        field,
        message: `${JSON.stringify(value)} has prefix /${prefix}; AWS allows /${VPC_PREFIX_RANGE.min} to /${VPC_PREFIX_RANGE.max}`,
      },
    ];
  }
  const network = (base & mask(prefix)) >>> 0;
  if (network !== base) {
    return [
      {
        field,
        message: `${JSON.stringify(value)} has host bits set; write the network address ${formatIpv4(network)}/${prefix}`,
      },
    ];
  }
  const inside = PRIVATE_RANGES.some(
    (r) => prefix >= r.prefix && (base & mask(r.prefix)) >>> 0 === r.base,
  );
  if (!inside) {
    return [{ field, message: `${JSON.stringify(value)} is not private; it must be ${allowed}` }];
  }
  return [];
}
