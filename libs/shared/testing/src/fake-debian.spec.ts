import { createHash } from 'node:crypto';
import { debianImageManifest, debPackagesStanza, debPoolPath } from './fake-debian';

describe('fake Debian upstreams', () => {
  const body = Buffer.from('deb bytes\n');
  const sha512 = createHash('sha512').update(body).digest('hex');

  it('serves a .deb under its source package, without the epoch', () => {
    expect(
      debPoolPath({ package: 'libpq5', version: '17.6-0+deb13u1', architecture: 'arm64' }),
    ).toBe('pool/main/p/postgresql-17/libpq5_17.6-0+deb13u1_arm64.deb');
    expect(debPoolPath({ package: 'fluent-bit', version: '1:4.2.1', architecture: 'amd64' })).toBe(
      'pool/main/f/fluent-bit/fluent-bit_4.2.1_amd64.deb',
    );
  });

  it('lists SHA512 in Fluent Bit stanzas unless told not to, in Debian ones only when told to', () => {
    const deb = { package: 'libpq5', version: '17.6-0+deb13u1', architecture: 'amd64' };
    const debian = debPackagesStanza('debian-archive', deb, 'pool/x.deb', body);
    expect(debian.split('\n').slice(0, 2)).toEqual(['Package: libpq5', 'Source: postgresql-17']);
    expect(debian).toContain('Filename: pool/x.deb\nSize: 10\n');
    expect(debian).not.toContain('SHA512:');
    expect(debPackagesStanza('debian-archive', { ...deb, sha512: true }, 'p', body)).toContain(
      `SHA512: ${sha512}`,
    );
    const fluent = { package: 'fluent-bit', version: '4.2.1', architecture: 'amd64' };
    expect(debPackagesStanza('fluentbit', fluent, 'p', body)).toContain(`SHA512: ${sha512}`);
    expect(debPackagesStanza('fluentbit', { ...fluent, sha512: false }, 'p', body)).not.toContain(
      'SHA512:',
    );
  });

  it('names the one concrete kernel in the image manifest', () => {
    expect(
      JSON.stringify(debianImageManifest('20260101-1', 'arm64', '6.12.9+deb13-cloud-arm64')),
    ).toContain('"name":"linux-image-6.12.9+deb13-cloud-arm64"');
  });
});
