import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import {
  CHECKSUM_SUFFIXES,
  dependencyObjectKey,
  expandTemplate,
  parseChecksumFile,
  selectGreatest,
  type Arch,
  type DesiredFile,
  type FileDependency,
  type VersionPin,
} from '@podmin/util-dependencies';
import type { GithubReleases, ReleaseAsset } from './github-releases';
import { badListing, type UpstreamHttp } from './upstream-http';

/** The version chosen for a release dependency, and its assets when it is a GitHub release. */
interface ResolvedRelease {
  version: string;
  /** Assets by name (GitHub releases only). */
  assets?: ReadonlyMap<string, ReleaseAsset>;
}

/** What a {@link ReleaseFileResolver} reads from. */
export interface ReleaseFileResolverOptions {
  http: UpstreamHttp;
  github: GithubReleases;
  /** The catalog's `{base}` template values. */
  bases: Readonly<Record<string, string>>;
  /** The CLI version, for `cli` pins. */
  cliVersion: string;
}

/**
 * Resolves release dependencies (GitHub releases, the Node.js index): the greatest acceptable
 * version (prereleases, drafts and other majors rejected), its per-architecture artifact URL,
 * the publisher's digest (SHA-512 where offered, else the strongest offered) and, where the
 * publisher lists it, the exact size. Each dependency's release is read once.
 */
export class ReleaseFileResolver {
  private readonly releases = new Map<string, Promise<ResolvedRelease>>();

  constructor(private readonly options: ReleaseFileResolverOptions) {}

  /** `dependency`'s artifact for every architecture in `archs`, in that order. */
  async resolve(dependency: FileDependency, archs: readonly Arch[]): Promise<DesiredFile[]> {
    const release = await this.release(dependency);
    const files: DesiredFile[] = [];
    for (const arch of archs) {
      files.push(await this.resolveFile(dependency, release, arch));
    }
    return files;
  }

  private async resolveFile(
    dependency: FileDependency,
    release: ResolvedRelease,
    arch: Arch,
  ): Promise<DesiredFile> {
    const values = {
      ...this.options.bases,
      version: release.version,
      arch: dependency.archNames[arch],
    };
    const base = {
      name: dependency.name,
      arch,
      version: release.version,
      path: dependencyObjectKey(dependency, release.version, arch),
    };
    if (dependency.artifact.kind === 'github-asset') {
      const assetName = expandTemplate(dependency.artifact.asset, values);
      const asset = release.assets?.get(assetName);
      if (asset === undefined) {
        throw new PodminError(
          'NOT_FOUND',
          `resolving ${dependency.name} ${release.version} for ${arch}: the release has no asset ${assetName}`,
          { fault: 'system' },
        );
      }
      const digest = await this.assetDigest(dependency, release, asset);
      return { ...base, url: asset.url, digest, size: asset.size };
    }
    if (dependency.artifact.kind !== 'url') {
      throw new PodminError('INTERNAL', `${dependency.name} is resolved from a package index`);
    }
    const url = expandTemplate(dependency.artifact.url, values);
    const digest = await this.urlDigest(dependency, release.version, url);
    return { ...base, url, digest };
  }

  /** A GitHub asset's digest: its checksum-file asset, else GitHub's own SHA-256. */
  private async assetDigest(
    dependency: FileDependency,
    release: ResolvedRelease,
    asset: ReleaseAsset,
  ): Promise<string> {
    if (dependency.digest.kind === 'checksum-file') {
      for (const suffix of dependency.digest.suffixes) {
        const checksumAsset = release.assets?.get(`${asset.name}${suffix}`);
        if (checksumAsset === undefined) continue;
        const text = await this.options.http.checksumText(checksumAsset.url, false);
        return parseChecksumFile(
          text ?? '',
          asset.name,
          CHECKSUM_SUFFIXES[suffix],
          checksumAsset.url,
        );
      }
    }
    if (asset.digest !== undefined && /^sha256:[0-9a-f]{64}$/.test(asset.digest)) {
      return asset.digest;
    }
    throw new PodminError(
      'NOT_FOUND',
      `resolving ${dependency.name} ${release.version}: the publisher offers no digest for ${asset.name}`,
      { fault: 'system' },
    );
  }

  /** A URL artifact's digest: the version's checksum list, or the first checksum file beside it. */
  private async urlDigest(
    dependency: FileDependency,
    version: string,
    url: string,
  ): Promise<string> {
    const fileName = path.posix.basename(new URL(url).pathname);
    const source = dependency.digest;
    const { http } = this.options;
    if (source.kind === 'checksum-list') {
      const listUrl = `${this.options.bases['nodeDist'] ?? ''}/v${version}/${source.file}`;
      const text = await http.checksumText(listUrl, false);
      return parseChecksumFile(text ?? '', fileName, source.algorithm, listUrl);
    }
    if (source.kind !== 'checksum-file') {
      throw new PodminError('INTERNAL', `${dependency.name}'s digest comes from a package index`);
    }
    for (const suffix of source.suffixes) {
      const text = await http.checksumText(`${url}${suffix}`, true);
      if (text !== undefined) {
        return parseChecksumFile(text, fileName, CHECKSUM_SUFFIXES[suffix], `${url}${suffix}`);
      }
    }
    throw new PodminError(
      'NOT_FOUND',
      `resolving ${dependency.name} ${version}: no checksum file (${source.suffixes.join(', ')}) beside ${url}`,
      { fault: 'system' },
    );
  }

  private release(dependency: FileDependency): Promise<ResolvedRelease> {
    const key = dependency.name;
    let pending = this.releases.get(key);
    if (pending === undefined) {
      pending = this.loadRelease(dependency);
      this.releases.set(key, pending);
    }
    return pending;
  }

  private async loadRelease(dependency: FileDependency): Promise<ResolvedRelease> {
    const pin = releasePin(dependency);
    const { cliVersion } = this.options;
    if (dependency.versions.kind === 'debian-packages') {
      throw new PodminError('INTERNAL', `${dependency.name} is resolved from a package index`);
    }
    if (dependency.versions.kind === 'node-dist') {
      const url = `${this.options.bases['nodeDist'] ?? ''}/index.json`;
      const { json } = await this.options.http.listing(url);
      const chosen = selectGreatest(readNodeIndex(json, url), (v) => v, pin, cliVersion);
      if (chosen === undefined) throw noVersion(dependency, url);
      return { version: chosen };
    }
    const { repo, tagPrefix } = dependency.versions;
    const releases = await this.options.github.list(repo);
    const candidates = releases
      .filter((r) => !r.draft && !r.prerelease && r.tag.startsWith(tagPrefix))
      .map((r) => ({ ...r, version: r.tag.slice(tagPrefix.length) }));
    const chosen = selectGreatest(candidates, (r) => r.version, pin, cliVersion);
    if (chosen === undefined) throw noVersion(dependency, `GitHub releases of ${repo}`);
    return {
      version: chosen.version,
      assets: new Map(chosen.assets.map((a) => [a.name, a])),
    };
  }
}

function readNodeIndex(json: unknown, url: string): string[] {
  if (!Array.isArray(json)) throw badListing(url, 'expected an array of versions');
  return json.flatMap((item: unknown) => {
    const v = (item as Record<string, unknown> | null)?.['version'];
    return typeof v === 'string' && v.startsWith('v') ? [v.slice(1)] : [];
  });
}

/** A release dependency's semantic-version pin (Debian package pins are resolved apart). */
function releasePin(dependency: FileDependency): VersionPin {
  const pin = dependency.pin;
  if (pin.kind === 'debian') {
    throw new PodminError('INTERNAL', `${dependency.name} is resolved from a package index`);
  }
  return pin;
}

function noVersion(dependency: FileDependency, where: string): PodminError {
  const pin = dependency.pin;
  const wanted =
    pin.kind === 'semver'
      ? `${pin.major}.${pin.minor ?? 'x'}`
      : pin.kind === 'dated'
        ? 'a dated release'
        : pin.kind === 'debian'
          ? 'a stable Debian package version'
          : 'the CLI version';
  return new PodminError(
    'NOT_FOUND',
    `resolving ${dependency.name}: ${where} has no stable release matching ${wanted}`,
    {
      fault: 'system',
      ...(pin.kind === 'cli'
        ? { hint: 'Use --agent-source <checkout> to build the agent from a podmin checkout.' }
        : {}),
    },
  );
}
