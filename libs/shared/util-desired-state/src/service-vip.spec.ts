import { createHash } from 'node:crypto';
import { formatIpv6Groups, serviceVip } from './service-vip';

/** An independent canonical form: the WHATWG URL serializer compresses IPv6 per RFC 5952. */
function canonicalByUrl(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

describe('serviceVip', () => {
  it('matches digests computed with `openssl dgst -sha512`', () => {
    // printf 'podmin\0default\0web' | openssl dgst -sha512 → cca74758e2205703…
    expect(serviceVip('podmin', 'default', 'web')).toBe('fd50:6f64:6d69:0:cca7:4758:e220:5703');
    // printf 'prod\0product\0database' | openssl dgst -sha512 → cb573baea1ba715b…
    expect(serviceVip('prod', 'product', 'database')).toBe('fd50:6f64:6d69:0:cb57:3bae:a1ba:715b');
    // printf 'podmin\0default\0svc26566' | openssl dgst -sha512 → 0000ca64388ff578…: the zero
    // group after the prefix joins the prefix's zero group into one `::`.
    expect(serviceVip('podmin', 'default', 'svc26566')).toBe('fd50:6f64:6d69::ca64:388f:f578');
  });

  it('agrees with a by-hand digest and the URL serializer for many names', () => {
    for (let i = 0; i < 200; i++) {
      const [cluster, namespace, name] = [`c${i % 7}`, `ns${i % 13}`, `svc-${i}`];
      const hex = createHash('sha512')
        .update(Buffer.concat([Buffer.from(cluster), Buffer.of(0), Buffer.from(namespace)]))
        .update(Buffer.concat([Buffer.of(0), Buffer.from(name)]))
        .digest('hex')
        .slice(0, 16);
      const full = `fd50:6f64:6d69:0000:${hex.match(/.{4}/g)?.join(':') ?? ''}`;
      expect(serviceVip(cluster, namespace, name)).toBe(canonicalByUrl(full));
    }
  });

  it('separates the three parts, so moving a character between them changes the VIP', () => {
    expect(serviceVip('a', 'bc', 'd')).not.toBe(serviceVip('ab', 'c', 'd'));
    expect(serviceVip('a', 'b', 'cd')).not.toBe(serviceVip('a', 'bc', 'd'));
  });
});

describe('formatIpv6Groups', () => {
  it.each([
    [[0, 0, 0, 0, 0, 0, 0, 0], '::'],
    [[0, 0, 0, 0, 0, 0, 0, 1], '::1'],
    [[1, 0, 0, 0, 0, 0, 0, 0], '1::'],
    [[0x2001, 0xdb8, 0, 1, 0, 0, 0, 1], '2001:db8:0:1::1'],
    [[0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], '2001:db8::1:0:0:1'],
    [[0x2001, 0xdb8, 0, 1, 1, 1, 1, 1], '2001:db8:0:1:1:1:1:1'],
    [[0xfd50, 0xabcd, 0xef, 0, 0xa, 0xb, 0xc, 0xd], 'fd50:abcd:ef:0:a:b:c:d'],
  ])('formats %j as %s', (groups, text) => {
    expect(formatIpv6Groups(groups)).toBe(text);
    expect(formatIpv6Groups(groups)).toBe(
      canonicalByUrl(groups.map((g) => g.toString(16)).join(':')),
    );
  });

  it('rejects anything but eight 16-bit groups', () => {
    expect(() => formatIpv6Groups([0, 0, 0])).toThrow(RangeError);
    expect(() => formatIpv6Groups([0, 0, 0, 0, 0, 0, 0, 0x10000])).toThrow(RangeError);
  });
});
