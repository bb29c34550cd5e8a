import { gunzipSync } from 'node:zlib';
import { PodminError } from '@podmin/util-errors';
import {
  dependencyObjectKey,
  expandTemplate,
  parsePackagesIndex,
  recordedDebianVersion,
  selectDebianPackage,
  type Arch,
  type DebianPackage,
  type DesiredFile,
  type FileDependency,
} from '@podmin/util-dependencies';
import type { UpstreamHttp } from './upstream-http';

/** A distribution's compressed `Packages` index (Debian 13 main: about 10 MiB per architecture). */
const MAX_PACKAGES_GZ_BYTES = 64 * 1024 * 1024;
/** The same index uncompressed (Debian 13 main: about 50 MiB). */
const MAX_PACKAGES_TEXT_BYTES = 256 * 1024 * 1024;
const RECORDED_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;

/** The records of one package in a `Packages` index, and where the index was read. */
interface PackagesIndex {
  records: DebianPackage[];
  url: string;
}

/**
 * Resolves Debian package dependencies (`debian-packages` versions) from their publisher's
 * `Packages` index: the greatest acceptable version, its pool URL, size and listed digest.
 */
export class DebianPackageResolver {
  private readonly indexes = new Map<string, Promise<PackagesIndex>>();

  constructor(
    private readonly http: UpstreamHttp,
    /** The catalog's `{base}` template values (`{debianArchive}`, `{fluentbitPackages}`). */
    private readonly bases: Readonly<Record<string, string>>,
  ) {}

  /** The package `dependency` names for `arch`, as the mirror records it. */
  async resolve(dependency: FileDependency, arch: Arch): Promise<DesiredFile> {
    const { versions, pin, digest } = dependency;
    if (
      versions.kind !== 'debian-packages' ||
      pin.kind !== 'debian' ||
      digest.kind !== 'packages-index'
    ) {
      throw new PodminError('INTERNAL', `${dependency.name} is not a Debian package dependency`);
    }
    const repository = expandTemplate(versions.repository, this.bases);
    const upstreamArch = dependency.archNames[arch];
    const dir = `${repository}/dists/${versions.suite}/${versions.component}/binary-${upstreamArch}`;
    const { records, url: indexUrl } = await this.packagesIndex(dir, versions.package);
    const chosen = selectDebianPackage(records, versions.package, upstreamArch, pin);
    const doing = `resolving ${dependency.name} for ${arch}`;
    if (chosen === undefined) {
      throw new PodminError(
        'NOT_FOUND',
        `${doing}: ${indexUrl} lists no stable ${versions.package}${pin.major === undefined ? '' : ` ${pin.major}.x`} for ${upstreamArch}`,
        { fault: 'system' },
      );
    }
    const hex = chosen[digest.algorithm];
    if (hex === undefined) {
      throw new PodminError(
        'NOT_FOUND',
        `${doing}: ${indexUrl} lists ${versions.package} ${chosen.version} without its ${digest.algorithm.toUpperCase()} digest`,
        { fault: 'system' },
      );
    }
    const version = recordedDebianVersion(chosen.version);
    if (!RECORDED_VERSION.test(version)) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: version ${JSON.stringify(chosen.version)} cannot be recorded (at most 64 of A-Z, a-z, 0-9 and .+- after the epoch)`,
        { fault: 'system' },
      );
    }
    return {
      name: dependency.name,
      arch,
      version,
      url: `${repository}/${chosen.filename}`,
      path: dependencyObjectKey(dependency, version, arch),
      digest: `${digest.algorithm}:${hex}`,
      size: chosen.size,
    };
  }

  /** One `Packages` index per directory and package, read once however many dependencies ask. */
  private packagesIndex(dir: string, packageName: string): Promise<PackagesIndex> {
    const key = `${dir} ${packageName}`;
    let pending = this.indexes.get(key);
    if (pending === undefined) {
      pending = this.loadPackagesIndex(dir, packageName);
      this.indexes.set(key, pending);
    }
    return pending;
  }

  /**
   * Reads `<dir>/Packages.gz`, or the uncompressed `<dir>/Packages` where the publisher has no
   * `.gz`, bounded before and after decompression, and parses it strictly for `packageName`.
   */
  private async loadPackagesIndex(dir: string, packageName: string): Promise<PackagesIndex> {
    const gzUrl = `${dir}/Packages.gz`;
    const gz = await this.http.bytesIfPresent(gzUrl, MAX_PACKAGES_GZ_BYTES);
    let url = gzUrl;
    let text: string;
    if (gz !== undefined) {
      try {
        text = gunzipSync(gz, { maxOutputLength: MAX_PACKAGES_TEXT_BYTES }).toString('utf8');
      } catch (err) {
        throw new PodminError(
          'IO_ERROR',
          `reading the package index ${gzUrl}: not a gzip stream of at most ${MAX_PACKAGES_TEXT_BYTES} bytes (${(err as Error).message})`,
          { cause: err },
        );
      }
    } else {
      url = `${dir}/Packages`;
      text = await this.http.text(url, MAX_PACKAGES_TEXT_BYTES);
    }
    return { records: parsePackagesIndex(text, url, { only: new Set([packageName]) }), url };
  }
}
