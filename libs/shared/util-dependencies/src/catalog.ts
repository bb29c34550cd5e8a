import { PodminError } from '@podmin/util-errors';
import type { DebianVersionPin } from './debian';

/** CPU architectures a cluster may run; one cluster may mix both. */
export const ARCHITECTURES = ['amd64', 'arm64'] as const;

/** One supported CPU architecture, named as Go and Debian name it. */
export type Arch = (typeof ARCHITECTURES)[number];

/** True when `value` names a supported architecture. */
export function isArch(value: string): value is Arch {
  return (ARCHITECTURES as readonly string[]).includes(value);
}

/** Which upstream versions a dependency accepts. */
export type VersionPin =
  /** Greatest stable semantic version with this major (and minor, when given). */
  | { kind: 'semver'; major: number; minor?: number }
  /** Greatest dated release (`YYYYMMDD.N`), as gVisor numbers them. */
  | { kind: 'dated' }
  /** Exactly the running CLI's version (the published podmin-agent). */
  | { kind: 'cli' };

/** Where a dependency's versions are listed. */
export type VersionSource =
  /** GitHub releases of `repo`; the version is the tag without `tagPrefix`. */
  | { kind: 'github-releases'; repo: string; tagPrefix: string }
  /** The Node.js distribution index (`<nodeDist>/index.json`). */
  | { kind: 'node-dist' }
  /**
   * A Debian repository's `Packages` index of `package`:
   * `<repository>/dists/<suite>/<component>/binary-<arch>/Packages.gz` (or uncompressed
   * `Packages` where no `.gz` is published). `repository` is a base name in braces
   * (`{debianArchive}`, `{fluentbitPackages}`) the resolver's endpoints supply.
   */
  | {
      kind: 'debian-packages';
      repository: string;
      suite: string;
      component: string;
      package: string;
    };

/**
 * Where a version's artifact is downloaded from. Templates use `{version}` and `{arch}` (the
 * upstream architecture name), and URL templates start with a base name in braces
 * (`{k8sDownload}`, `{gvisorDownload}`, `{nodeDist}`) that the resolver's endpoints supply.
 */
export type ArtifactSource =
  /** An asset of the GitHub release, located through the release listing. */
  | { kind: 'github-asset'; asset: string }
  /** A URL outside GitHub releases. */
  | { kind: 'url'; url: string }
  /** The `Filename` of the chosen `Packages` record, under the repository root. */
  | { kind: 'debian-pool' };

/** How the publisher's digest of an artifact is obtained. */
export type DigestSource =
  /**
   * A checksum file beside the artifact (`<artifact><suffix>`): release assets for GitHub
   * assets, sibling URLs otherwise. Listed strongest first; the first one published is used.
   */
  | { kind: 'checksum-file'; suffixes: readonly ChecksumSuffix[] }
  /** A `SHASUMS256.txt`-style list in the version's directory (`<nodeDist>/v{version}/<file>`). */
  | { kind: 'checksum-list'; file: string; algorithm: 'sha256' | 'sha512' }
  /** The digest field of the chosen `Packages` record; required there. */
  | { kind: 'packages-index'; algorithm: 'sha256' | 'sha512' };

/** Checksum file suffixes the resolver understands, with the algorithm each implies. */
export const CHECKSUM_SUFFIXES = {
  '.sha512': 'sha512',
  '.sha512sum': 'sha512',
  '.sha256': 'sha256',
  '.sha256sum': 'sha256',
} as const;

/** One checksum file suffix. */
export type ChecksumSuffix = keyof typeof CHECKSUM_SUFFIXES;

/** A file dependency: one artifact per architecture, mirrored to `dependencies/<name>/`. */
export interface FileDependency {
  /** Map key in `dependencies/manifest.json` and the object folder name. */
  name: string;
  /** One line on what it is, for listings. */
  description: string;
  /** Semantic-version pins for releases; {@link DebianVersionPin} for Debian package indexes. */
  pin: VersionPin | DebianVersionPin;
  versions: VersionSource;
  artifact: ArtifactSource;
  digest: DigestSource;
  /** Upstream name of each architecture, substituted for `{arch}`. */
  archNames: Readonly<Record<Arch, string>>;
  /** Extension of the mirrored object and of the node's canonical file (`''` for a binary). */
  extension: string;
}

/** An image dependency, mirrored as an OCI layout under `mirror/<registry>/<repository>`. */
export interface ImageDependency {
  /** Map key under `images` in `dependencies/manifest.json`. */
  name: string;
  description: string;
  /** Upstream registry host. */
  registry: string;
  /** Upstream repository within the registry. */
  repository: string;
  pin: Extract<VersionPin, { kind: 'semver' }>;
}

/** Go's and Debian's architecture names, which most publishers use too. */
const GO_ARCH_NAMES: Readonly<Record<Arch, string>> = { amd64: 'amd64', arm64: 'arm64' };

/** The fields every release dependency spells out; `released` fills in the rest. */
type ReleasedEntry = Pick<
  FileDependency,
  'name' | 'description' | 'pin' | 'artifact' | 'extension'
> & {
  /** The GitHub repository whose releases list the versions. */
  repo: string;
  /** Default `v`. */
  tagPrefix?: string;
  /** Default a `.sha512` checksum file, else a `.sha256` one. */
  suffixes?: readonly ChecksumSuffix[];
  /** Default Go's names. */
  archNames?: Readonly<Record<Arch, string>>;
};

/** A dependency versioned by the GitHub releases of `repo`, verified by a checksum file. */
function released(entry: ReleasedEntry): FileDependency {
  return {
    name: entry.name,
    description: entry.description,
    pin: entry.pin,
    versions: { kind: 'github-releases', repo: entry.repo, tagPrefix: entry.tagPrefix ?? 'v' },
    artifact: entry.artifact,
    digest: { kind: 'checksum-file', suffixes: entry.suffixes ?? ['.sha512', '.sha256'] },
    archNames: entry.archNames ?? GO_ARCH_NAMES,
    extension: entry.extension,
  };
}

/**
 * The canonical dependency set every node needs, as data. kubelet and crictl are pinned to
 * Kubernetes 1.36; every other dependency to its major. The spec's set plus the Node.js runtime
 * that runs the TypeScript podmin-agent bundle.
 */
export const FILE_DEPENDENCIES: readonly FileDependency[] = [
  released({
    name: 'containerd',
    description: 'containerd 2 (its runc shim is not installed)',
    pin: { kind: 'semver', major: 2 },
    repo: 'containerd/containerd',
    artifact: { kind: 'github-asset', asset: 'containerd-{version}-linux-{arch}.tar.gz' },
    suffixes: ['.sha512', '.sha256sum', '.sha256'],
    extension: '.tar.gz',
  }),
  released({
    name: 'gvisor',
    description: 'the complete gVisor archive: runsc, its containerd shim and sidecar payload',
    pin: { kind: 'dated' },
    repo: 'google/gvisor',
    tagPrefix: 'release-',
    artifact: { kind: 'url', url: '{gvisorDownload}/{version}/{arch}/gvisor.tar.bz2' },
    archNames: { amd64: 'x86_64', arm64: 'aarch64' },
    extension: '.tar.bz2',
  }),
  released({
    name: 'cni-plugins',
    description: 'CNI reference plugins (ptp, host-local, loopback)',
    pin: { kind: 'semver', major: 1 },
    repo: 'containernetworking/plugins',
    artifact: { kind: 'github-asset', asset: 'cni-plugins-linux-{arch}-v{version}.tgz' },
    extension: '.tgz',
  }),
  released({
    name: 'kubelet',
    description: 'upstream kubelet 1.36 with its alpha local Pods API',
    pin: { kind: 'semver', major: 1, minor: 36 },
    repo: 'kubernetes/kubernetes',
    artifact: { kind: 'url', url: '{k8sDownload}/release/v{version}/bin/linux/{arch}/kubelet' },
    extension: '',
  }),
  released({
    name: 'crictl',
    description: 'crictl 1.36 for node diagnostics over the CRI socket',
    pin: { kind: 'semver', major: 1, minor: 36 },
    repo: 'kubernetes-sigs/cri-tools',
    artifact: { kind: 'github-asset', asset: 'crictl-v{version}-linux-{arch}.tar.gz' },
    extension: '.tar.gz',
  }),
  released({
    name: 'coredns',
    description: 'CoreDNS, the node resolver Pods use',
    pin: { kind: 'semver', major: 1 },
    repo: 'coredns/coredns',
    artifact: { kind: 'github-asset', asset: 'coredns_{version}_linux_{arch}.tgz' },
    extension: '.tgz',
  }),
  {
    name: 'nodejs',
    description: 'the Node.js 24 runtime that runs podmin-agent',
    pin: { kind: 'semver', major: 24 },
    versions: { kind: 'node-dist' },
    artifact: { kind: 'url', url: '{nodeDist}/v{version}/node-v{version}-linux-{arch}.tar.xz' },
    digest: { kind: 'checksum-list', file: 'SHASUMS256.txt', algorithm: 'sha256' },
    archNames: { amd64: 'x64', arm64: 'arm64' },
    extension: '.tar.xz',
  },
  released({
    name: 'podmin-agent',
    description:
      'the podmin-agent artifact published with this CLI version: the supervisor, every service program and what they load',
    pin: { kind: 'cli' },
    repo: 'podplane/podmin',
    // One archive (`nx run agent:artifact`): a node installs nothing else of podmin.
    artifact: { kind: 'github-asset', asset: 'podmin-agent-v{version}.tar.gz' },
    // One architecture-independent archive (koffi's native modules for both platforms are
    // inside), mirrored once per architecture so every object name carries its architecture
    // and retention groups it like the rest.
    archNames: { amd64: 'any', arm64: 'any' },
    extension: '.tar.gz',
  }),
];

/** The image dependencies: today only the pause image. */
export const IMAGE_DEPENDENCIES: readonly ImageDependency[] = [
  {
    name: 'pause',
    description: 'the Pod sandbox image',
    registry: 'registry.k8s.io',
    repository: 'pause',
    pin: { kind: 'semver', major: 3 },
  },
];

/** Names of every file dependency, in catalog order: the canonical set user-data requires. */
export const FILE_DEPENDENCY_NAMES: readonly string[] = FILE_DEPENDENCIES.map((d) => d.name);

/**
 * The Debian 13 (`trixie`, `main`) package named `name` of `repository`, from its `Packages`
 * index: the pool file, verified by the index's `algorithm` digest.
 */
function debianPackage(
  entry: Pick<FileDependency, 'name' | 'description'> & {
    pin: DebianVersionPin;
    /** A base name in braces the resolver's endpoints supply. */
    repository: string;
    algorithm: 'sha256' | 'sha512';
  },
): FileDependency {
  return {
    name: entry.name,
    description: entry.description,
    pin: entry.pin,
    versions: {
      kind: 'debian-packages',
      repository: entry.repository,
      suite: 'trixie',
      component: 'main',
      package: entry.name,
    },
    artifact: { kind: 'debian-pool' },
    digest: { kind: 'packages-index', algorithm: entry.algorithm },
    archNames: GO_ARCH_NAMES,
    extension: '.deb',
  };
}

/**
 * The packages of `setup --otel-logs`, in the order nodes install them with dpkg (libpq5
 * before Fluent Bit, which links against it). Resolved and published only when log export is
 * configured, so the canonical set above, and what user-data requires without it, is unchanged.
 */
export const OTEL_LOGS_DEPENDENCIES: readonly FileDependency[] = [
  debianPackage({
    name: 'libpq5',
    description: "Debian 13's current PostgreSQL client library, which Fluent Bit links against",
    pin: { kind: 'debian' },
    repository: '{debianArchive}',
    // Debian's indexes list MD5 and SHA-256 only: SHA-256 is the strongest offered.
    algorithm: 'sha256',
  }),
  debianPackage({
    name: 'fluent-bit',
    description: 'Fluent Bit 5, the node log collector exporting container logs over OTLP',
    pin: { kind: 'debian', major: 5 },
    repository: '{fluentbitPackages}',
    algorithm: 'sha512',
  }),
];

/** Names of the `--otel-logs` packages, in install order. */
export const OTEL_LOGS_DEPENDENCY_NAMES: readonly string[] = OTEL_LOGS_DEPENDENCIES.map(
  (d) => d.name,
);

/** The catalog entry named `name` (the canonical set or the `--otel-logs` packages). */
export function findFileDependency(name: string): FileDependency | undefined {
  return [...FILE_DEPENDENCIES, ...OTEL_LOGS_DEPENDENCIES].find((d) => d.name === name);
}

/** The node's canonical file name of a dependency (`containerd.tar.gz`, `kubelet`). */
export function canonicalFileName(dependency: Pick<FileDependency, 'name' | 'extension'>): string {
  return `${dependency.name}${dependency.extension}`;
}

/** Object key of one mirrored file: `dependencies/<name>/<name>-v<version>-linux-<arch><ext>`. */
export function dependencyObjectKey(
  dependency: Pick<FileDependency, 'name' | 'extension'>,
  version: string,
  arch: Arch,
): string {
  return `dependencies/${dependency.name}/${dependency.name}-v${version}-linux-${arch}${dependency.extension}`;
}

/** Object-key prefix of an image mirror: `mirror/<registry>/<repository>`. */
export function imageMirrorPath(image: Pick<ImageDependency, 'registry' | 'repository'>): string {
  return `mirror/${image.registry}/${image.repository}`;
}

/** Expands `{key}` placeholders; throws on a placeholder without a value (a catalog bug). */
export function expandTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([A-Za-z0-9]+)\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) {
      throw new Error(`expanding ${JSON.stringify(template)}: no value for {${key}}`);
    }
    return value;
  });
}

/**
 * An image Podmin pins to one version and the digest of its multi-platform index, for a
 * built-in install (`podmin install`); unlike {@link IMAGE_DEPENDENCIES} it is never resolved
 * to a newer release, so every cluster runs exactly the reviewed bytes.
 */
export interface PinnedImage {
  /** The component the image runs. */
  name: string;
  description: string;
  /** Upstream registry host. */
  registry: string;
  /** Upstream repository within the registry. */
  repository: string;
  /** The upstream tag the digest was read from. */
  version: string;
  /** `sha256:<hex>` of the upstream multi-platform image index. */
  digest: string;
}

/**
 * cloudflared for `podmin install cloudflared`: Cloudflare's own multi-platform image
 * (linux/amd64 and linux/arm64; `cloudflared` in /usr/local/bin, user 65532). The digest is the
 * upstream index digest of the 2026.8.2 tag as published on Docker Hub.
 */
export const CLOUDFLARED_IMAGE: PinnedImage = Object.freeze({
  name: 'cloudflared',
  description: 'the Cloudflare Tunnel connector',
  registry: 'docker.io',
  repository: 'cloudflare/cloudflared',
  version: '2026.8.2',
  digest: 'sha256:0aa26e284f05e6c77ae375b8c9c11d9eb6a448fb7bcd8d40f31cb6176189eb38',
});

/** The upstream reference of a pinned image: `<registry>/<repository>:<version>`. */
export function pinnedImageSource(
  image: Pick<PinnedImage, 'registry' | 'repository' | 'version'>,
): string {
  return `${image.registry}/${image.repository}:${image.version}`;
}

const PIN_OVERRIDE = /^([0-9A-Za-z][0-9A-Za-z._-]{0,127})@(sha256:[0-9a-f]{64})$/;

/**
 * `image` with its version and digest replaced by `override` (`<version>@sha256:<hex>`), for
 * tests that serve a stand-in image whose digest cannot be the real one. Throws on any other
 * shape, so a typo never silently keeps or half-applies the pin.
 */
export function overridePin(image: PinnedImage, override: string): PinnedImage {
  const match = PIN_OVERRIDE.exec(override);
  if (match === null || match[1] === undefined || match[2] === undefined) {
    throw new PodminError(
      'CONFIG_INVALID',
      `overriding the ${image.name} pin: ${JSON.stringify(override)} is not <version>@sha256:<64 hex>`,
    );
  }
  return Object.freeze({ ...image, version: match[1], digest: match[2] });
}
