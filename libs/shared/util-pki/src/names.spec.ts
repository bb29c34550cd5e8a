import { canonicalIp, splitPemCertificates } from './certificate';
import { clusterTrustDomain, parseSpiffeId } from './names';

describe('names', () => {
  it('parses SPIFFE IDs strictly', () => {
    expect(parseSpiffeId('spiffe://prod.podmin.internal/ns/a/pod/b')).toEqual({
      trustDomain: 'prod.podmin.internal',
      segments: ['ns', 'a', 'pod', 'b'],
      uri: 'spiffe://prod.podmin.internal/ns/a/pod/b',
    });
    for (const bad of [
      'https://prod.podmin.internal/ns/a',
      'spiffe://prod.podmin.internal',
      'spiffe://prod.podmin.internal/',
      'spiffe://prod.podmin.internal//a',
      'spiffe://prod.podmin.internal/a/../b',
      'spiffe://Prod.podmin.internal/a',
      'spiffe://prod.podmin.internal:443/a',
      'spiffe://prod.podmin.internal/a?b',
      'spiffe://prod.podmin.internal/a%2f',
    ]) {
      expect(parseSpiffeId(bad)).toBeUndefined();
    }
  });

  it('derives the trust domain from a valid cluster name only', () => {
    expect(clusterTrustDomain('prod')).toBe('prod.podmin.internal');
    expect(() => clusterTrustDomain('prod.evil')).toThrow(/cluster/);
  });

  it('canonicalises IP addresses and splits PEM bundles strictly', () => {
    expect(canonicalIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(() => splitPemCertificates('')).toThrow(/only PEM CERTIFICATE blocks/);
    expect(() =>
      splitPemCertificates('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\njunk'),
    ).toThrow(/only PEM CERTIFICATE blocks/);
    expect(
      splitPemCertificates(
        '-----BEGIN CERTIFICATE-----\r\nAAAA\r\n-----END CERTIFICATE-----\n\n-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----',
      ),
    ).toEqual([
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      '-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n',
    ]);
  });
});
