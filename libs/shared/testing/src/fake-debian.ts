import { createHash } from 'node:crypto';
import { hexDigest } from './fake-artifacts';

// What Debian's upstreams publish, in their real formats: an apt repository's `Packages` stanza
// and pool path (Debian's archive and Fluent Bit's repository), and cloud.debian.org's EC2 image
// manifest.

/** The two apt repositories the fake serves: Debian's archive and Fluent Bit's. */
export type FakeAptRepository = 'debian-archive' | 'fluentbit';

/** One binary package a fake apt repository lists (and serves, unless `unserved`). */
export interface FakeDebPackage {
  package: string;
  /** The Debian version, epoch included (`1:2.0-1`). */
  version: string;
  /** `amd64`, `arm64` or `all`. */
  architecture: string;
  /** The `.deb` bytes; default deterministic bytes named after package, version and arch. */
  body?: Buffer;
  /** Whether the index lists SHA512 (Fluent Bit's does, Debian's does not). */
  sha512?: boolean;
}

/** The source package a binary package is built from (libpq5 from postgresql-17). */
function sourcePackage(name: string): string {
  return name === 'libpq5' ? 'postgresql-17' : name;
}

/** The pool path a `.deb` is served at, under its source package's directory. */
export function debPoolPath(deb: FakeDebPackage): string {
  const fileVersion = deb.version.replace(/^\d+:/, '');
  const source = sourcePackage(deb.package);
  return `pool/main/${source.startsWith('lib') ? source.slice(0, 4) : source.charAt(0)}/${source}/${deb.package}_${fileVersion}_${deb.architecture}.deb`;
}

/**
 * The package's stanza in `repository`'s `Packages` index, fields in the order that repository
 * writes them (Fluent Bit's lists SHA512 unless told not to, Debian's only when told to).
 */
export function debPackagesStanza(
  repository: FakeAptRepository,
  deb: FakeDebPackage,
  pool: string,
  body: Buffer,
): string {
  const source = sourcePackage(deb.package);
  return [
    `Package: ${deb.package}`,
    ...(source === deb.package ? [] : [`Source: ${source}`]),
    `Version: ${deb.version}`,
    `Installed-Size: ${Math.ceil(body.length / 1024) * 3}`,
    'Maintainer: Podmin Tests <tests@podmin.invalid>',
    `Architecture: ${deb.architecture}`,
    'Depends: libc6 (>= 2.38), zlib1g (>= 1:1.2.0)',
    ...(repository === 'fluentbit'
      ? [
          `Filename: ${pool}`,
          `Size: ${body.length}`,
          `MD5sum: ${createHash('md5').update(body).digest('hex')}`,
          `SHA1: ${createHash('sha1').update(body).digest('hex')}`,
          `SHA256: ${hexDigest('sha256', body)}`,
          ...(deb.sha512 === false ? [] : [`SHA512: ${hexDigest('sha512', body)}`]),
          'Section: default',
          'Priority: optional',
          'Homepage: https://fluentbit.io/',
          'Description: Fast data collector for Linux',
          ' Fluent Bit is a fast log processor and forwarder.',
          ' .',
          ' It is part of the Fluentd ecosystem.',
        ]
      : [
          `Description: ${deb.package} from the test archive`,
          'Multi-Arch: same',
          `Description-md5: ${createHash('md5').update(deb.package).digest('hex')}`,
          'Section: libs',
          'Priority: optional',
          `Filename: ${pool}`,
          `Size: ${body.length}`,
          `MD5sum: ${createHash('md5').update(body).digest('hex')}`,
          `SHA256: ${hexDigest('sha256', body)}`,
          ...(deb.sha512 === true ? [`SHA512: ${hexDigest('sha512', body)}`] : []),
        ]),
  ].join('\n');
}

/**
 * The immutable EC2 image manifest of a Debian 13 build as cloud.debian.org publishes it: a v1
 * List with one Build item listing its packages (one concrete kernel,
 * `linux-image-<kernelRelease>`) and an Upload item.
 */
export function debianImageManifest(build: string, arch: string, kernelRelease: string): unknown {
  const buildItem = {
    apiVersion: 'cloud.debian.org/v1alpha1',
    kind: 'Build',
    metadata: { labels: { 'cloud.debian.org/version': build } },
    data: {
      info: {
        arch,
        release: 'trixie',
        release_id: '13',
        type: 'official',
        vendor: 'ec2',
        version: build,
      },
      packages: [
        { name: 'bash', version: '5.2.37-2' },
        { name: `linux-image-cloud-${arch}`, version: '6.12' },
        { name: `linux-image-${kernelRelease}`, version: '6.12' },
      ],
    },
  };
  const uploadItem = {
    apiVersion: 'cloud.debian.org/v1alpha1',
    kind: 'Upload',
    metadata: {},
    data: {
      provider: 'cloud.debian.org',
      ref: `trixie/${build}/debian-13-ec2-${arch}-${build}.tar.xz`,
    },
  };
  return { apiVersion: 'v1', kind: 'List', items: [buildItem, uploadItem] };
}
