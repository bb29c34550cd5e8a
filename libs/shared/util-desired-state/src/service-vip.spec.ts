import { createHash } from 'node:crypto';
import { serviceVip } from './service-vip';

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
