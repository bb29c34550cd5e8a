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
  const root = trimSlashes(base);
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

/** The default endpoints with `overrides` applied (registries merged host by host). */
export function withDefaultEndpoints(overrides?: Partial<ReleaseEndpoints>): ReleaseEndpoints {
  return {
    ...DEFAULT_RELEASE_ENDPOINTS,
    ...overrides,
    registries: { ...DEFAULT_RELEASE_ENDPOINTS.registries, ...overrides?.registries },
  };
}

/** The catalog's `{base}` template values: the download endpoints without trailing slashes. */
export function templateBases(endpoints: ReleaseEndpoints): Record<string, string> {
  return {
    k8sDownload: trimSlashes(endpoints.k8sDownload),
    gvisorDownload: trimSlashes(endpoints.gvisorDownload),
    nodeDist: trimSlashes(endpoints.nodeDist),
    debianArchive: trimSlashes(endpoints.debianArchive),
    fluentbitPackages: trimSlashes(endpoints.fluentbitPackages),
  };
}

/** `url` without trailing slashes, to append `/<path>` to. */
export function trimSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}
