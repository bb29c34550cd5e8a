import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import semver from 'semver';
import { PodminError } from '@podmin/util-errors';
import {
  CHECKSUM_SUFFIXES,
  FILE_DEPENDENCIES,
  IMAGE_DEPENDENCIES,
  JOOL_BUILDS_REPO,
  JOOL_DEPENDENCY,
  OTEL_LOGS_DEPENDENCIES,
  debianImageBuild,
  debianImageManifestPath,
  joolAssetName,
  joolRecordedVersion,
  kernelAbiOf,
  parseDebianImageKernel,
  selectJoolRelease,
  dependencyObjectKey,
  expandTemplate,
  imageMirrorPath,
  parseChecksumFile,
  parsePackagesIndex,
  recordedDebianVersion,
  selectDebianPackage,
  selectGreatest,
  type Arch,
  type DebianPackage,
  type DesiredFile,
  type DesiredImage,
  type FileDependency,
  type ImageDependency,
  type Nat64Kernel,
  type VersionPin,
} from '@podmin/util-dependencies';
import { getBytes, getJson, getText, type FetchFunction, type HttpReadOptions } from './http';

/** Base URLs of every upstream the resolver reads; tests point them at a loopback server. */
export interface ReleaseEndpoints {
  /** GitHub REST API root. */
  githubApi: string;
  /** Kubernetes binaries (`/release/v<version>/bin/linux/<arch>/...`). */
  k8sDownload: string;
  /** gVisor release directory (`/<version>/<arch>/gvisor.tar.bz2`). */
  gvisorDownload: string;
  /** Node.js distribution root (`/index.json`, `/v<version>/...`). */
  nodeDist: string;
  /** Registry host → base URL of its distribution API. */
  registries: Readonly<Record<string, string>>;
  /** Debian's cloud image root (`/trixie/<build>/debian-13-ec2-<arch>-<build>.json`). */
  debianCloud: string;
  /** Debian's package archive (`/dists/trixie/main/binary-<arch>/Packages.gz`, `/pool/...`). */
  debianArchive: string;
  /** Fluent Bit's apt repository for Debian 13 (`/dists/trixie/main/...`, `/pool/...`). */
  fluentbitPackages: string;
}

/** The real upstreams. */
export const DEFAULT_RELEASE_ENDPOINTS: ReleaseEndpoints = {
  githubApi: 'https://api.github.com',
  k8sDownload: 'https://dl.k8s.io',
  gvisorDownload: 'https://storage.googleapis.com/gvisor/releases/release',
  nodeDist: 'https://nodejs.org/dist',
  registries: { 'registry.k8s.io': 'https://registry.k8s.io' },
  debianCloud: 'https://cloud.debian.org/images/cloud',
  debianArchive: 'https://deb.debian.org/debian',
  fluentbitPackages: 'https://packages.fluentbit.io/debian/trixie',
};

/**
 * Every upstream under one base URL, for tests only (`PODMIN_TEST_DEPENDENCY_BASE_URL`): the
 * GitHub API at `<base>/gh`, dl.k8s.io at `<base>/k8s`, gVisor at `<base>/gvisor`, Node.js at
 * `<base>/node`, registry.k8s.io at `<base>/registry`, Debian's cloud images at `<base>/debian`,
 * Debian's package archive at `<base>/debian-archive` and Fluent Bit's apt repository at
 * `<base>/fluentbit`. Checksum files are read beside their artifacts and pool files under their
 * repository, so they move with them; GitHub assets are fetched where that API lists them.
 */
export function releaseEndpointsUnder(base: string): ReleaseEndpoints {
  const root = base.replace(/\/+$/, '');
  return {
    githubApi: `${root}/gh`,
    k8sDownload: `${root}/k8s`,
    gvisorDownload: `${root}/gvisor`,
    nodeDist: `${root}/node`,
    registries: { 'registry.k8s.io': `${root}/registry` },
    debianCloud: `${root}/debian`,
    debianArchive: `${root}/debian-archive`,
    fluentbitPackages: `${root}/fluentbit`,
  };
}

/** A podmin-agent artifact built from a checkout (`--agent-source`) instead of the release. */
export interface AgentArtifact {
  version: string;
  /** `file:` URL of the archive. */
  url: string;
  digest: string;
  size: number;
}

/** Options of {@link DependencyResolver}. */
export interface DependencyResolverOptions {
  /** The CLI version; the published agent must match it. */
  cliVersion: string;
  endpoints?: Partial<ReleaseEndpoints>;
  fetch?: FetchFunction;
  /** Sent as a bearer token to the GitHub API (raises its rate limit). */
  githubToken?: string;
  timeoutMs?: number;
  /** Pages of 100 releases read per GitHub repository (5). */
  maxReleasePages?: number;
  /** Replaces the published agent with a locally built one. */
  agent?: AgentArtifact;
}

interface ReleaseAsset {
  name: string;
  url: string;
  size: number;
  /** GitHub's own `sha256:` digest of the asset, when it reports one. */
  digest?: string;
}

interface ResolvedRelease {
  version: string;
  /** Assets by name (GitHub releases only). */
  assets?: ReadonlyMap<string, ReleaseAsset>;
}

const MAX_LISTING_BYTES = 16 * 1024 * 1024;
const MAX_CHECKSUM_BYTES = 256 * 1024;
/** A distribution's compressed `Packages` index (Debian 13 main: about 10 MiB per architecture). */
const MAX_PACKAGES_GZ_BYTES = 64 * 1024 * 1024;
/** The same index uncompressed (Debian 13 main: about 50 MiB). */
const MAX_PACKAGES_TEXT_BYTES = 256 * 1024 * 1024;
const RECORDED_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;

/**
 * Resolves the catalog against upstream release APIs: the greatest acceptable version of each
 * dependency (prereleases, drafts and other majors rejected), its per-architecture artifact URL,
 * the publisher's digest (SHA-512 where offered, else the strongest offered) and, where the
 * publisher lists it, the exact size.
 */
export class DependencyResolver {
  private readonly endpoints: ReleaseEndpoints;
  private readonly http: Omit<HttpReadOptions, 'maxBytes'>;
  private readonly releases = new Map<string, Promise<ResolvedRelease>>();
  private readonly packageIndexes = new Map<
    string,
    Promise<{ records: DebianPackage[]; url: string }>
  >();

  constructor(private readonly options: DependencyResolverOptions) {
    this.endpoints = {
      ...DEFAULT_RELEASE_ENDPOINTS,
      ...options.endpoints,
      registries: { ...DEFAULT_RELEASE_ENDPOINTS.registries, ...options.endpoints?.registries },
    };
    this.http = { fetch: options.fetch ?? fetch, timeoutMs: options.timeoutMs ?? 30_000 };
  }

  /** Every catalog file for every architecture in `archs`, in catalog order. */
  async resolveFiles(archs: readonly Arch[]): Promise<DesiredFile[]> {
    const perDependency = await Promise.all(
      FILE_DEPENDENCIES.map((dependency) => this.resolveDependency(dependency, archs)),
    );
    return perDependency.flat();
  }

  /**
   * The exact kernel an official Debian 13 AMI boots first, read from the Build item of its
   * immutable, dated EC2 image manifest on Debian's cloud image site.
   */
  async imageKernel(arch: Arch, imageName: string): Promise<Nat64Kernel> {
    const build = debianImageBuild(imageName, arch);
    if (build === undefined) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `reading the kernel of ${imageName}: not an official Debian 13 ${arch} AMI name (debian-13-${arch}-YYYYMMDD-N)`,
        { fault: 'system' },
      );
    }
    const url = `${this.endpoints.debianCloud.replace(/\/+$/, '')}/${debianImageManifestPath(build, arch)}`;
    const { json } = await getJson(url, { ...this.http, maxBytes: MAX_LISTING_BYTES });
    const kernelRelease = parseDebianImageKernel(json, arch, build, url);
    return { arch, imageName, kernelRelease, kernelAbi: kernelAbiOf(kernelRelease, arch) };
  }

  /**
   * The jool-builds module archive for each NAT64 kernel: the greatest stable Jool 4 release
   * built for exactly that kernel ABI, its architecture's archive and the SHA-256 digest the
   * release's `SHA256SUMS` records for it.
   */
  async resolveJool(kernels: readonly Nat64Kernel[]): Promise<DesiredFile[]> {
    if (kernels.length === 0) return [];
    const releases = (await this.githubReleases(JOOL_BUILDS_REPO)).filter(
      (r) => !r.draft && !r.prerelease,
    );
    const files: DesiredFile[] = [];
    for (const kernel of kernels) {
      const chosen = selectJoolRelease(releases, kernel.kernelAbi);
      if (chosen === undefined) {
        throw new PodminError(
          'NOT_FOUND',
          `resolving Jool for ${kernel.imageName}: ${JOOL_BUILDS_REPO} has no stable Jool 4 release for kernel ${kernel.kernelRelease} (tag jool-<version>-kernel-${kernel.kernelAbi})`,
          {
            fault: 'system',
            hint: 'jool-builds publishes a release once Debian ships a new cloud kernel; run setup again later.',
          },
        );
      }
      const { release, joolVersion } = chosen;
      const assetName = joolAssetName(joolVersion, kernel.kernelAbi, kernel.arch);
      const asset = release.assets.find((a) => a.name === assetName);
      const sums = release.assets.find((a) => a.name === 'SHA256SUMS');
      if (asset === undefined || sums === undefined) {
        throw new PodminError(
          'NOT_FOUND',
          `resolving Jool ${joolVersion} for ${kernel.kernelRelease}: release ${release.tag} lacks ${asset === undefined ? assetName : 'SHA256SUMS'}`,
          { fault: 'system' },
        );
      }
      const text = await this.checksumText(sums.url, false);
      const digest = parseChecksumFile(text ?? '', assetName, 'sha256', sums.url);
      // GitHub records its own SHA-256 of every asset: both must agree.
      if (asset.digest !== undefined && asset.digest !== digest) {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `resolving Jool ${joolVersion} for ${kernel.kernelRelease}: SHA256SUMS of ${release.tag} says ${digest} for ${assetName}, GitHub says ${asset.digest}`,
          { fault: 'system' },
        );
      }
      const version = joolRecordedVersion(joolVersion, kernel.kernelAbi);
      files.push({
        name: JOOL_DEPENDENCY,
        arch: kernel.arch,
        version,
        url: asset.url,
        path: dependencyObjectKey(
          { name: JOOL_DEPENDENCY, extension: '.tar.gz' },
          version,
          kernel.arch,
        ),
        digest,
        size: asset.size,
      });
    }
    return files;
  }

  /**
   * The `--otel-logs` packages for every architecture in `archs`, in install order (libpq5,
   * then Fluent Bit): the greatest stable version of each in its publisher's `Packages` index
   * (Fluent Bit 5; Debian 13's current libpq5), its pool URL, exact size and the digest the
   * index lists (SHA-512 for Fluent Bit, SHA-256 for libpq5, as the spec asks).
   */
  async resolveOtelLogs(archs: readonly Arch[]): Promise<DesiredFile[]> {
    const files: DesiredFile[] = [];
    for (const dependency of OTEL_LOGS_DEPENDENCIES) {
      for (const arch of archs) files.push(await this.resolveDebianPackage(dependency, arch));
    }
    return files;
  }

  /** Every catalog image at its greatest acceptable tag (digest comes from the image port). */
  async resolveImages(): Promise<DesiredImage[]> {
    return Promise.all(IMAGE_DEPENDENCIES.map((image) => this.resolveImage(image)));
  }

  private async resolveDebianPackage(dependency: FileDependency, arch: Arch): Promise<DesiredFile> {
    const { versions, pin, digest } = dependency;
    if (
      versions.kind !== 'debian-packages' ||
      pin.kind !== 'debian' ||
      digest.kind !== 'packages-index'
    ) {
      throw new PodminError('INTERNAL', `${dependency.name} is not a Debian package dependency`);
    }
    const repository = expandTemplate(versions.repository, this.templateBases());
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
  private packagesIndex(
    dir: string,
    packageName: string,
  ): Promise<{ records: DebianPackage[]; url: string }> {
    const key = `${dir} ${packageName}`;
    let pending = this.packageIndexes.get(key);
    if (pending === undefined) {
      pending = this.loadPackagesIndex(dir, packageName);
      this.packageIndexes.set(key, pending);
    }
    return pending;
  }

  /**
   * Reads `<dir>/Packages.gz`, or the uncompressed `<dir>/Packages` where the publisher has no
   * `.gz`, bounded before and after decompression, and parses it strictly for `packageName`.
   */
  private async loadPackagesIndex(
    dir: string,
    packageName: string,
  ): Promise<{ records: DebianPackage[]; url: string }> {
    const gzUrl = `${dir}/Packages.gz`;
    const gz = await getBytes(gzUrl, {
      ...this.http,
      maxBytes: MAX_PACKAGES_GZ_BYTES,
      allowMissing: true,
    });
    let url = gzUrl;
    let text: string;
    if (gz !== undefined) {
      try {
        text = gunzipSync(gz.bytes, { maxOutputLength: MAX_PACKAGES_TEXT_BYTES }).toString('utf8');
      } catch (err) {
        throw new PodminError(
          'IO_ERROR',
          `reading the package index ${gzUrl}: not a gzip stream of at most ${MAX_PACKAGES_TEXT_BYTES} bytes (${(err as Error).message})`,
          { cause: err },
        );
      }
    } else {
      url = `${dir}/Packages`;
      const plain = await getText(url, { ...this.http, maxBytes: MAX_PACKAGES_TEXT_BYTES });
      if (plain === undefined) throw new PodminError('IO_ERROR', `querying ${url}: not found`);
      text = plain.text;
    }
    return { records: parsePackagesIndex(text, url, { only: new Set([packageName]) }), url };
  }

  private async resolveDependency(
    dependency: FileDependency,
    archs: readonly Arch[],
  ): Promise<DesiredFile[]> {
    if (dependency.name === 'podmin-agent' && this.options.agent !== undefined) {
      const agent = this.options.agent;
      return archs.map((arch) => ({
        name: dependency.name,
        arch,
        version: agent.version,
        url: agent.url,
        path: dependencyObjectKey(dependency, agent.version, arch),
        digest: agent.digest,
        size: agent.size,
      }));
    }
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
      ...this.templateBases(),
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
    const digest = await this.urlDigest(dependency, release.version, url, values);
    return { ...base, url, digest };
  }

  private templateBases(): Record<string, string> {
    const trim = (u: string) => u.replace(/\/+$/, '');
    return {
      k8sDownload: trim(this.endpoints.k8sDownload),
      gvisorDownload: trim(this.endpoints.gvisorDownload),
      nodeDist: trim(this.endpoints.nodeDist),
      debianArchive: trim(this.endpoints.debianArchive),
      fluentbitPackages: trim(this.endpoints.fluentbitPackages),
    };
  }

  private async assetDigest(
    dependency: FileDependency,
    release: ResolvedRelease,
    asset: ReleaseAsset,
  ): Promise<string> {
    if (dependency.digest.kind === 'checksum-file') {
      for (const suffix of dependency.digest.suffixes) {
        const checksumAsset = release.assets?.get(`${asset.name}${suffix}`);
        if (checksumAsset === undefined) continue;
        const text = await this.checksumText(checksumAsset.url, false);
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

  private async urlDigest(
    dependency: FileDependency,
    version: string,
    url: string,
    values: Record<string, string>,
  ): Promise<string> {
    const fileName = path.posix.basename(new URL(url).pathname);
    const source = dependency.digest;
    if (source.kind === 'checksum-list') {
      const listUrl = `${values['nodeDist'] ?? ''}/v${version}/${source.file}`;
      const text = await this.checksumText(listUrl, false);
      return parseChecksumFile(text ?? '', fileName, source.algorithm, listUrl);
    }
    if (source.kind !== 'checksum-file') {
      throw new PodminError('INTERNAL', `${dependency.name}'s digest comes from a package index`);
    }
    for (const suffix of source.suffixes) {
      const text = await this.checksumText(`${url}${suffix}`, true);
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

  private async checksumText(url: string, allowMissing: boolean): Promise<string | undefined> {
    const result = await getText(url, { ...this.http, maxBytes: MAX_CHECKSUM_BYTES, allowMissing });
    return result?.text;
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
    if (dependency.versions.kind === 'debian-packages') {
      throw new PodminError('INTERNAL', `${dependency.name} is resolved from a package index`);
    }
    if (dependency.versions.kind === 'node-dist') {
      const url = `${this.templateBases()['nodeDist'] ?? ''}/index.json`;
      const { json } = await getJson(url, { ...this.http, maxBytes: MAX_LISTING_BYTES });
      const versions = readNodeIndex(json, url);
      const chosen = selectGreatest(versions, (v) => v, pin, this.options.cliVersion);
      if (chosen === undefined) throw noVersion(dependency, url);
      return { version: chosen };
    }
    const { repo, tagPrefix } = dependency.versions;
    const releases = await this.githubReleases(repo);
    const candidates = releases
      .filter((r) => !r.draft && !r.prerelease && r.tag.startsWith(tagPrefix))
      .map((r) => ({ ...r, version: r.tag.slice(tagPrefix.length) }));
    const chosen = selectGreatest(candidates, (r) => r.version, pin, this.options.cliVersion);
    if (chosen === undefined) throw noVersion(dependency, `GitHub releases of ${repo}`);
    return {
      version: chosen.version,
      assets: new Map(chosen.assets.map((a) => [a.name, a])),
    };
  }

  private async githubReleases(repo: string): Promise<GithubRelease[]> {
    const headers: Record<string, string> = {
      accept: 'application/vnd.github+json',
      'user-agent': 'podmin',
      'x-github-api-version': '2022-11-28',
    };
    if (this.options.githubToken !== undefined) {
      headers['authorization'] = `Bearer ${this.options.githubToken}`;
    }
    const releases: GithubRelease[] = [];
    let url: string | undefined =
      `${this.endpoints.githubApi.replace(/\/+$/, '')}/repos/${repo}/releases?per_page=100`;
    for (let page = 0; url !== undefined && page < (this.options.maxReleasePages ?? 5); page++) {
      const result: Awaited<ReturnType<typeof getJson>> = await getJson(url, {
        ...this.http,
        headers,
        maxBytes: MAX_LISTING_BYTES,
      });
      releases.push(...readGithubReleases(result.json, url));
      url = nextLink(result.headers.get('link'));
    }
    return releases;
  }

  private async resolveImage(image: ImageDependency): Promise<DesiredImage> {
    const base = this.endpoints.registries[image.registry];
    if (base === undefined) {
      throw new PodminError(
        'INTERNAL',
        `resolving image ${image.name}: no endpoint for ${image.registry}`,
      );
    }
    const url = `${base.replace(/\/+$/, '')}/v2/${image.repository}/tags/list`;
    const { json } = await getJson(url, { ...this.http, maxBytes: MAX_LISTING_BYTES });
    const tags = readTagList(json, url);
    // Registries tag releases loosely (`3.10` and `3.10.1`); compare as coerced versions and
    // prefer the tag that spells out its patch when two coerce equally.
    const candidates = tags
      .filter((t) => /^\d+\.\d+(?:\.\d+)?$/.test(t))
      .sort((a, b) => b.length - a.length);
    const chosen = selectGreatest(candidates, (t) => semver.coerce(t)?.version ?? '', image.pin);
    if (chosen === undefined) {
      throw new PodminError(
        'NOT_FOUND',
        `resolving image ${image.name}: no ${image.pin.major}.x tag at ${url}`,
        {
          fault: 'system',
        },
      );
    }
    return {
      name: image.name,
      version: chosen,
      source: `${image.registry}/${image.repository}:${chosen}`,
      path: imageMirrorPath(image),
    };
  }
}

interface GithubRelease {
  tag: string;
  draft: boolean;
  prerelease: boolean;
  assets: ReleaseAsset[];
}

function readGithubReleases(json: unknown, url: string): GithubRelease[] {
  if (!Array.isArray(json)) throw badListing(url, 'expected an array of releases');
  return json.map((item: unknown, i) => {
    const r = item as Record<string, unknown> | null;
    if (
      r === null ||
      typeof r !== 'object' ||
      typeof r['tag_name'] !== 'string' ||
      typeof r['draft'] !== 'boolean' ||
      typeof r['prerelease'] !== 'boolean' ||
      !Array.isArray(r['assets'])
    ) {
      throw badListing(url, `release ${i} lacks tag_name, draft, prerelease or assets`);
    }
    const assets = (r['assets'] as unknown[]).map((a: unknown, j) => {
      const asset = a as Record<string, unknown> | null;
      if (
        asset === null ||
        typeof asset !== 'object' ||
        typeof asset['name'] !== 'string' ||
        typeof asset['browser_download_url'] !== 'string' ||
        typeof asset['size'] !== 'number'
      ) {
        throw badListing(url, `release ${i} asset ${j} lacks name, browser_download_url or size`);
      }
      const digest = asset['digest'];
      return {
        name: asset['name'],
        url: asset['browser_download_url'],
        size: asset['size'],
        ...(typeof digest === 'string' ? { digest } : {}),
      };
    });
    return { tag: r['tag_name'], draft: r['draft'], prerelease: r['prerelease'], assets };
  });
}

function readNodeIndex(json: unknown, url: string): string[] {
  if (!Array.isArray(json)) throw badListing(url, 'expected an array of versions');
  return json.flatMap((item: unknown) => {
    const v = (item as Record<string, unknown> | null)?.['version'];
    return typeof v === 'string' && v.startsWith('v') ? [v.slice(1)] : [];
  });
}

function readTagList(json: unknown, url: string): string[] {
  const tags = (json as Record<string, unknown> | null)?.['tags'];
  if (!Array.isArray(tags)) throw badListing(url, 'expected {"tags": [...]}');
  return tags.filter((t): t is string => typeof t === 'string');
}

function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="next"/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

/** A release dependency's semantic-version pin (Debian package pins are resolved apart). */
function releasePin(dependency: FileDependency): VersionPin {
  const pin = dependency.pin;
  if (pin.kind === 'debian') {
    throw new PodminError('INTERNAL', `${dependency.name} is resolved from a package index`);
  }
  return pin;
}

function badListing(url: string, why: string): PodminError {
  return new PodminError('IO_ERROR', `reading the release listing ${url}: ${why}`);
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
