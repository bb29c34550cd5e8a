import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { type Arch } from './catalog';
import { selectGreatest } from './versions';

/**
 * NAT64 instances run stateful Jool, whose kernel modules must match the instance's exact
 * kernel. Setup reads the pinned Debian AMI's initial kernel from Debian's immutable, versioned
 * image manifest and mirrors only the matching prebuilt archive of podplane/jool-builds.
 */

/** Manifest key and object folder of the mirrored Jool module archive. */
export const JOOL_DEPENDENCY = 'jool';

/** The GitHub repository publishing prebuilt Jool modules for Debian cloud kernels. */
export const JOOL_BUILDS_REPO = 'podplane/jool-builds';

/** Jool releases accepted: stable 4.x. */
export const JOOL_PIN = { kind: 'semver', major: 4 } as const;

/** Files every module archive holds, flat, and nothing else. */
export const JOOL_ARCHIVE_FILES = [
  'COPYING',
  'NOTICE',
  'SOURCE',
  'jool.ko',
  'jool_common.ko',
  'jool_siit.ko',
  'metadata.json',
] as const;

/** The exact kernel a Debian image boots first, and the Jool build matching it. */
export interface Nat64Kernel {
  arch: Arch;
  /** The AMI name it was read for, e.g. `debian-13-arm64-20251117-2300`. */
  imageName: string;
  /** `uname -r` of the image's kernel, e.g. `6.12.48+deb13-cloud-arm64`. */
  kernelRelease: string;
  /** The kernel ABI jool-builds releases are named by, e.g. `6.12.48+deb13`. */
  kernelAbi: string;
}

const DEBIAN_AMI_NAME = /^debian-13-(amd64|arm64)-(\d{8}-\d{1,9})$/;

/**
 * The Debian build version (`YYYYMMDD-<build number>`, e.g. `20251117-2299`) of an official Debian 13 AMI name, or undefined
 * when the name is not `debian-13-<arch>-<version>` for `arch`.
 */
export function debianImageBuild(imageName: string, arch: Arch): string | undefined {
  const match = DEBIAN_AMI_NAME.exec(imageName);
  return match !== null && match[1] === arch ? match[2] : undefined;
}

/**
 * Path of the EC2 image manifest of a Debian 13 build under Debian's cloud image root
 * (`https://cloud.debian.org/images/cloud`): the dated directory, never `latest`.
 */
export function debianImageManifestPath(build: string, arch: Arch): string {
  return `trixie/${build}/debian-13-ec2-${arch}-${build}.json`;
}

/**
 * The one concrete cloud kernel (`linux-image-<release>-cloud-<arch>`) the Build item of a
 * Debian image manifest lists for this EC2 build and architecture. Anything else — another
 * vendor, release, architecture or version, no kernel or several — is an error naming it.
 */
export function parseDebianImageKernel(
  json: unknown,
  arch: Arch,
  build: string,
  source: string,
): string {
  const subject = `reading the Debian image manifest ${source}`;
  const items = (json as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) {
    throw new ValidationError(subject, [{ field: 'items', message: 'must be an array' }], {
      code: 'INVALID_MANIFEST',
      fault: 'system',
    });
  }
  const suffix = `-cloud-${arch}`;
  const kernels: string[] = [];
  let builds = 0;
  for (const item of items as unknown[]) {
    const record = item as {
      kind?: unknown;
      data?: { info?: Record<string, unknown>; packages?: unknown };
    } | null;
    if (record?.kind !== 'Build') continue;
    const info = record.data?.info ?? {};
    if (
      info['arch'] !== arch ||
      info['release'] !== 'trixie' ||
      info['release_id'] !== '13' ||
      info['vendor'] !== 'ec2' ||
      info['version'] !== build
    ) {
      continue;
    }
    builds++;
    const packages = Array.isArray(record.data?.packages) ? record.data.packages : [];
    for (const pkg of packages as unknown[]) {
      const name = (pkg as { name?: unknown } | null)?.name;
      if (typeof name !== 'string' || !name.startsWith('linux-image-')) continue;
      const release = name.slice('linux-image-'.length);
      if (/^[0-9]/.test(release) && release.endsWith(suffix)) kernels.push(release);
    }
  }
  const problems: FieldProblem[] = [];
  if (builds === 0) {
    problems.push({
      field: 'items',
      message: `no Build of Debian 13 (trixie) ec2 ${arch} version ${build}`,
    });
  } else if (kernels.length !== 1) {
    problems.push({
      field: 'items[kind=Build].data.packages',
      message: `must list exactly one linux-image-<version>${suffix} package, found ${kernels.length}${kernels.length > 0 ? `: ${kernels.join(', ')}` : ''}`,
    });
  }
  const kernel = kernels[0];
  if (problems.length > 0 || kernel === undefined) {
    throw new ValidationError(subject, problems, { code: 'INVALID_MANIFEST', fault: 'system' });
  }
  if (!/^[0-9][0-9A-Za-z.+~-]*$/.test(kernel) || kernel.length > 96) {
    throw new ValidationError(
      subject,
      [{ field: 'packages', message: `kernel release ${JSON.stringify(kernel)} is malformed` }],
      { code: 'INVALID_MANIFEST', fault: 'system' },
    );
  }
  return kernel;
}

/** The release-level ABI of a Debian cloud kernel release (`6.12.48+deb13`). */
export function kernelAbiOf(kernelRelease: string, arch: Arch): string {
  const suffix = `-cloud-${arch}`;
  if (!kernelRelease.endsWith(suffix) || kernelRelease.length === suffix.length) {
    throw new Error(`${kernelRelease} is not a Debian cloud kernel of ${arch}`);
  }
  return kernelRelease.slice(0, -suffix.length);
}

/** The jool-builds release tag of a Jool version and kernel ABI. */
export function joolReleaseTag(joolVersion: string, kernelAbi: string): string {
  return `jool-${joolVersion}-kernel-${kernelAbi}`;
}

/** The per-architecture module archive of a jool-builds release. */
export function joolAssetName(joolVersion: string, kernelAbi: string, arch: Arch): string {
  return `jool-${joolVersion}-${kernelAbi}-${arch}.tar.gz`;
}

/**
 * The greatest stable Jool 4.x among release tags built for exactly `kernelAbi`; undefined
 * when none is.
 */
export function selectJoolRelease<T extends { tag: string }>(
  releases: readonly T[],
  kernelAbi: string,
): { release: T; joolVersion: string } | undefined {
  const tail = `-kernel-${kernelAbi}`;
  const candidates = releases
    .filter((r) => r.tag.startsWith('jool-') && r.tag.endsWith(tail))
    .map((release) => ({ release, joolVersion: release.tag.slice(5, -tail.length) }));
  return selectGreatest(candidates, (c) => c.joolVersion, JOOL_PIN);
}

/**
 * The version podmin records for a mirrored archive: Jool's version and the kernel ABI it was
 * built for (`4.1.15-6.12.48+deb13`), so a new kernel is a new version.
 */
export function joolRecordedVersion(joolVersion: string, kernelAbi: string): string {
  return `${joolVersion}-${kernelAbi}`;
}

/** What an archive's `metadata.json` must say. */
export interface JoolArchiveExpectation {
  joolVersion: string;
  kernelRelease: string;
  arch: Arch;
}

/**
 * Problems with a module archive: its file list (exactly {@link JOOL_ARCHIVE_FILES}, flat) and
 * its `metadata.json` (the Jool version, exact kernel release and architecture expected, and
 * the three modules). Empty when it matches.
 */
export function checkJoolArchive(
  entries: readonly string[],
  metadata: unknown,
  expected: JoolArchiveExpectation,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const names = entries.map((e) => e.replace(/^\.\//, ''));
  for (const name of names) {
    if (!(JOOL_ARCHIVE_FILES as readonly string[]).includes(name)) {
      problems.push({ field: name, message: 'is not a file a Jool module archive holds' });
    }
  }
  for (const name of JOOL_ARCHIVE_FILES) {
    if (!names.includes(name)) problems.push({ field: name, message: 'is missing' });
  }
  if (metadata === undefined) return problems;
  const m = (metadata ?? {}) as Record<string, unknown>;
  const want: Array<[string, string]> = [
    ['jool_version', expected.joolVersion],
    ['kernel_release', expected.kernelRelease],
    ['architecture', expected.arch],
  ];
  for (const [field, value] of want) {
    if (m[field] !== value) {
      problems.push({
        field: `metadata.json ${field}`,
        message: `must be ${value}, found ${JSON.stringify(m[field] ?? null)}`,
      });
    }
  }
  const modules = m['modules'];
  const wanted = ['jool.ko', 'jool_common.ko', 'jool_siit.ko'];
  if (
    !Array.isArray(modules) ||
    modules.length !== wanted.length ||
    !wanted.every((w) => modules.includes(w))
  ) {
    problems.push({ field: 'metadata.json modules', message: `must be ${wanted.join(', ')}` });
  }
  return problems;
}
