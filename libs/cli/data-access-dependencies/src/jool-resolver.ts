import { PodminError } from '@podmin/util-errors';
import {
  JOOL_BUILDS_REPO,
  JOOL_DEPENDENCY,
  debianImageBuild,
  debianImageManifestPath,
  dependencyObjectKey,
  joolAssetName,
  joolRecordedVersion,
  kernelAbiOf,
  parseChecksumFile,
  parseDebianImageKernel,
  selectJoolRelease,
  type Arch,
  type DesiredFile,
  type Nat64Kernel,
} from '@podmin/util-dependencies';
import type { GithubRelease, GithubReleases } from './github-releases';
import { trimSlashes } from './release-endpoints';
import type { UpstreamHttp } from './upstream-http';

/**
 * The exact kernel an official Debian 13 AMI boots first, read from the Build item of its
 * immutable, dated EC2 image manifest under `debianCloud` (Debian's cloud image site).
 */
export async function readImageKernel(
  http: UpstreamHttp,
  debianCloud: string,
  arch: Arch,
  imageName: string,
): Promise<Nat64Kernel> {
  const build = debianImageBuild(imageName, arch);
  if (build === undefined) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `reading the kernel of ${imageName}: not an official Debian 13 ${arch} AMI name (debian-13-${arch}-YYYYMMDD-N)`,
      { fault: 'system' },
    );
  }
  const url = `${trimSlashes(debianCloud)}/${debianImageManifestPath(build, arch)}`;
  const { json } = await http.listing(url);
  const kernelRelease = parseDebianImageKernel(json, arch, build, url);
  return { arch, imageName, kernelRelease, kernelAbi: kernelAbiOf(kernelRelease, arch) };
}

/**
 * The jool-builds module archive for each NAT64 kernel: the greatest stable Jool 4 release
 * built for exactly that kernel ABI, its architecture's archive and the SHA-256 digest the
 * release's `SHA256SUMS` records for it (which must agree with GitHub's own digest).
 */
export async function resolveJoolFiles(
  http: UpstreamHttp,
  github: GithubReleases,
  kernels: readonly Nat64Kernel[],
): Promise<DesiredFile[]> {
  if (kernels.length === 0) return [];
  const releases = (await github.list(JOOL_BUILDS_REPO)).filter((r) => !r.draft && !r.prerelease);
  const files: DesiredFile[] = [];
  for (const kernel of kernels) {
    files.push(await joolFileFor(http, releases, kernel));
  }
  return files;
}

async function joolFileFor(
  http: UpstreamHttp,
  releases: GithubRelease[],
  kernel: Nat64Kernel,
): Promise<DesiredFile> {
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
  const doing = `resolving Jool ${joolVersion} for ${kernel.kernelRelease}`;
  if (asset === undefined || sums === undefined) {
    throw new PodminError(
      'NOT_FOUND',
      `${doing}: release ${release.tag} lacks ${asset === undefined ? assetName : 'SHA256SUMS'}`,
      { fault: 'system' },
    );
  }
  const text = await http.checksumText(sums.url, false);
  const digest = parseChecksumFile(text ?? '', assetName, 'sha256', sums.url);
  // GitHub records its own SHA-256 of every asset: both must agree.
  if (asset.digest !== undefined && asset.digest !== digest) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: SHA256SUMS of ${release.tag} says ${digest} for ${assetName}, GitHub says ${asset.digest}`,
      { fault: 'system' },
    );
  }
  const version = joolRecordedVersion(joolVersion, kernel.kernelAbi);
  return {
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
  };
}
