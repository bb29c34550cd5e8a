import { formatIpv6, inIpv6Prefix } from './ipv6';

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

describe('inIpv6Prefix', () => {
  it.each([
    ['fd50:1:2:3:4:5:6:7', 'fd50:1:2:3:4::/80', true],
    ['fd50:1:2:3:5:5:6:7', 'fd50:1:2:3:4::/80', false],
    ['fd50:1:2:3:4::9/128', 'fd50:1:2:3:4::/80', true],
    ['2001:db8:ff::1', '2001:db8:f0::/44', true],
    ['2001:db8:10f::1', '2001:db8:f0::/44', false],
    ['::1', '::/0', true],
    ['::1', '::1/128', true],
    ['::2', '::1/128', false],
    ['not-an-address', '::/0', false],
    ['::1', '::/129', false],
    ['::1', '::', false],
  ])('%s in %s is %s', (address, prefix, inside) => {
    expect(inIpv6Prefix(address, prefix)).toBe(inside);
  });
});
