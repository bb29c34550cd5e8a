import { formatIpv6 } from './ipv6';

/** An independent canonical form: the WHATWG URL serializer compresses IPv6 per RFC 5952. */
function canonicalByUrl(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

describe('formatIpv6', () => {
  it.each([
    [[0, 0, 0, 0, 0, 0, 0, 0], '::'],
    [[0, 0, 0, 0, 0, 0, 0, 1], '::1'],
    [[1, 0, 0, 0, 0, 0, 0, 0], '1::'],
    [[0x2001, 0xdb8, 0, 1, 0, 0, 0, 1], '2001:db8:0:1::1'],
    [[0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], '2001:db8::1:0:0:1'],
    [[0x2001, 0xdb8, 0, 1, 1, 1, 1, 1], '2001:db8:0:1:1:1:1:1'],
    [[0xfd50, 0xabcd, 0xef, 0, 0xa, 0xb, 0xc, 0xd], 'fd50:abcd:ef:0:a:b:c:d'],
  ])('formats %j as %s', (groups, text) => {
    expect(formatIpv6(groups)).toBe(text);
    expect(formatIpv6(groups)).toBe(canonicalByUrl(groups.map((g) => g.toString(16)).join(':')));
  });

  it('rejects anything but eight 16-bit groups', () => {
    expect(() => formatIpv6([0, 0, 0])).toThrow(RangeError);
    expect(() => formatIpv6([0, 0, 0, 0, 0, 0, 0, 0x10000])).toThrow(RangeError);
  });
});
