import { hasCode } from '@podmin/util-errors';
import {
  JOOL_ARCHIVE_FILES,
  checkJoolArchive,
  debianImageBuild,
  debianImageManifestPath,
  joolAssetName,
  joolRecordedVersion,
  joolReleaseTag,
  kernelAbiOf,
  parseDebianImageKernel,
  selectJoolRelease,
} from './jool';
import { parseDependencyObjectKey } from './manifest';
import { dependencyObjectKey } from './catalog';

/** A Debian image manifest shaped like cloud.debian.org's (a v1 List of Build and Upload). */
function imageManifest(
  packages: string[],
  info: Record<string, string> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'cloud.debian.org/v1alpha1',
        kind: 'Build',
        metadata: { labels: { 'cloud.debian.org/vendor': 'ec2' } },
        data: {
          info: {
            arch: 'arm64',
            release: 'trixie',
            release_id: '13',
            type: 'official',
            vendor: 'ec2',
            version: '20251117-2300',
            ...info,
          },
          packages: packages.map((name) => ({ name, version: '1' })),
        },
      },
      {
        apiVersion: 'cloud.debian.org/v1alpha1',
        kind: 'Upload',
        metadata: {},
        data: { provider: 'cloud.debian.org', ref: 'trixie/20251117-2300/x.tar.xz' },
      },
    ],
  };
}

function problemFields(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
    return (err as { problems: Array<{ field: string; message: string }> }).problems.map(
      (p) => `${p.field}: ${p.message}`,
    );
  }
  throw new Error('expected a rejection');
}

describe('Debian image kernel', () => {
  it('reads the build version from official AMI names of the architecture only', () => {
    expect(debianImageBuild('debian-13-arm64-20251117-2300', 'arm64')).toBe('20251117-2300');
    expect(debianImageBuild('debian-13-arm64-20251117-2300', 'amd64')).toBeUndefined();
    expect(debianImageBuild('debian-13-arm64-daily-20251117-2300', 'arm64')).toBeUndefined();
    expect(debianImageBuild('debian-12-arm64-20251117-2300', 'arm64')).toBeUndefined();
    expect(debianImageBuild('debian-13-arm64-20251117-2300-1', 'arm64')).toBeUndefined();
    // The suffix is Debian's build number, not a time: 2299 and 2601 exist.
    expect(debianImageBuild('debian-13-amd64-20260914-2601', 'amd64')).toBe('20260914-2601');
    expect(debianImageBuild('debian-13-amd64-20260914-12345', 'amd64')).toBe('20260914-12345');
    expect(debianImageBuild('debian-13-amd64-2026091-2601', 'amd64')).toBeUndefined();
  });

  it('names the dated EC2 manifest, never latest', () => {
    expect(debianImageManifestPath('20251117-2300', 'amd64')).toBe(
      'trixie/20251117-2300/debian-13-ec2-amd64-20251117-2300.json',
    );
  });

  it('finds the one concrete cloud kernel of the matching build', () => {
    const json = imageManifest([
      'linux-image-cloud-arm64',
      'linux-image-6.12.48+deb13-cloud-arm64',
      'linux-headers-6.12.48+deb13-cloud-arm64',
      'openssh-server',
    ]);
    expect(parseDebianImageKernel(json, 'arm64', '20251117-2300', 'm.json')).toBe(
      '6.12.48+deb13-cloud-arm64',
    );
  });

  it('rejects another vendor, architecture or version, and zero or several kernels', () => {
    const kernel = ['linux-image-6.12.48+deb13-cloud-arm64'];
    expect(
      problemFields(() =>
        parseDebianImageKernel(
          imageManifest(kernel, { vendor: 'generic' }),
          'arm64',
          '20251117-2300',
          'm',
        ),
      ),
    ).toEqual(['items: no Build of Debian 13 (trixie) ec2 arm64 version 20251117-2300']);
    expect(
      problemFields(() =>
        parseDebianImageKernel(imageManifest(kernel), 'arm64', '20251118-0000', 'm'),
      ),
    ).toHaveLength(1);
    expect(
      problemFields(() =>
        parseDebianImageKernel(imageManifest(kernel), 'amd64', '20251117-2300', 'm'),
      ),
    ).toHaveLength(1);
    expect(
      problemFields(() =>
        parseDebianImageKernel(
          imageManifest(['linux-image-cloud-arm64']),
          'arm64',
          '20251117-2300',
          'm',
        ),
      ),
    ).toEqual([
      'items[kind=Build].data.packages: must list exactly one linux-image-<version>-cloud-arm64 package, found 0',
    ]);
    const two = imageManifest([...kernel, 'linux-image-6.12.50+deb13-cloud-arm64']);
    expect(
      problemFields(() => parseDebianImageKernel(two, 'arm64', '20251117-2300', 'm'))[0],
    ).toContain('found 2: 6.12.48+deb13-cloud-arm64, 6.12.50+deb13-cloud-arm64');
    expect(
      problemFields(() => parseDebianImageKernel({ kind: 'List' }, 'arm64', 'x', 'm')),
    ).toEqual(['items: must be an array']);
  });

  it('derives the kernel ABI of a cloud kernel release', () => {
    expect(kernelAbiOf('6.12.48+deb13-cloud-amd64', 'amd64')).toBe('6.12.48+deb13');
    expect(() => kernelAbiOf('6.12.48+deb13-amd64', 'amd64')).toThrow(/not a Debian cloud kernel/);
  });
});

describe('jool-builds releases', () => {
  const abi = '6.12.48+deb13';

  it('picks the greatest stable Jool 4 built for exactly this kernel ABI', () => {
    const releases = [
      { tag: joolReleaseTag('4.1.15', '6.12.50+deb13') },
      { tag: joolReleaseTag('4.1.14', abi) },
      { tag: joolReleaseTag('4.1.15', abi) },
      { tag: joolReleaseTag('4.2.0-rc1', abi) },
      { tag: joolReleaseTag('5.0.0', abi) },
      { tag: `${joolReleaseTag('4.1.16', abi)}x` },
    ];
    expect(selectJoolRelease(releases, abi)).toEqual({
      release: { tag: 'jool-4.1.15-kernel-6.12.48+deb13' },
      joolVersion: '4.1.15',
    });
    expect(selectJoolRelease(releases, '6.1.0+deb12')).toBeUndefined();
    expect(joolAssetName('4.1.15', abi, 'arm64')).toBe('jool-4.1.15-6.12.48+deb13-arm64.tar.gz');
  });

  it('records a version whose object key the manifest accepts', () => {
    const version = joolRecordedVersion('4.1.15', abi);
    const key = dependencyObjectKey({ name: 'jool', extension: '.tar.gz' }, version, 'arm64');
    expect(key).toBe('dependencies/jool/jool-v4.1.15-6.12.48+deb13-linux-arm64.tar.gz');
    expect(parseDependencyObjectKey(key)).toEqual({ name: 'jool', version, arch: 'arm64' });
  });
});

describe('Jool module archive check', () => {
  const expected = {
    joolVersion: '4.1.15',
    kernelRelease: '6.12.48+deb13-cloud-arm64',
    arch: 'arm64' as const,
  };
  const metadata = {
    jool_version: '4.1.15',
    kernel_abi: '6.12.48+deb13',
    kernel_release: '6.12.48+deb13-cloud-arm64',
    architecture: 'arm64',
    modules: ['jool_common.ko', 'jool.ko', 'jool_siit.ko'],
  };

  it('accepts the published layout', () => {
    expect(checkJoolArchive([...JOOL_ARCHIVE_FILES], metadata, expected)).toEqual([]);
  });

  it('names every mismatch: kernel, architecture, modules, missing and foreign files', () => {
    const problems = checkJoolArchive(
      [
        'jool.ko',
        'metadata.json',
        '../etc/passwd',
        'COPYING',
        'NOTICE',
        'SOURCE',
        'jool_common.ko',
      ],
      {
        ...metadata,
        kernel_release: '6.12.50+deb13-cloud-arm64',
        architecture: 'amd64',
        modules: ['jool.ko'],
      },
      expected,
    ).map((p) => p.field);
    expect(problems).toEqual([
      '../etc/passwd',
      'jool_siit.ko',
      'metadata.json kernel_release',
      'metadata.json architecture',
      'metadata.json modules',
    ]);
  });
});
