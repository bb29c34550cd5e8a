import { artifact, hexDigest } from './fake-artifacts';
import type { FakeAptRepository, FakeDebPackage } from './fake-debian';
import type { FakeRelease } from './fake-upstream';

// The upstream world a FakeUpstream starts with: the releases, downloads, indexes and tags the
// dependency resolver's tests expect (newest, prereleases, drafts and other majors included).

/** What laying out the default world needs of the fake server. */
export interface UpstreamWorld {
  /** The server's base URL, for links the listings carry. */
  readonly base: string;
  /** Serves `body` at `path`. */
  serveFile(path: string, body: Buffer): void;
  /** Serves `body` as JSON at `path`, with a `Link` header when `link` is given. */
  serveJson(path: string, body: unknown, link?: string): void;
  /** Publishes a GitHub release of `repo`, listed before those published earlier. */
  addRelease(repo: string, release: FakeRelease, checksumSuffixes: string[]): void;
  /** Lists and serves a binary package in a fake apt repository. */
  addDebPackage(repository: FakeAptRepository, deb: FakeDebPackage): string;
}

/** Lays out the default upstream world on `world`. */
export function layDefaultUpstreams(world: UpstreamWorld): void {
  const archAssets = (
    template: (arch: string) => string,
    label: string,
    archs = ['amd64', 'arm64'],
  ) => Object.fromEntries(archs.map((a) => [template(a), artifact(`${label}-${a}`)]));
  const gh = (repo: string, releases: FakeRelease[], suffixes: string[]) => {
    for (const r of [...releases].reverse()) world.addRelease(repo, r, suffixes);
  };
  gh(
    'containerd/containerd',
    [
      {
        tag: 'v3.0.0',
        assets: archAssets((a) => `containerd-3.0.0-linux-${a}.tar.gz`, 'containerd-3'),
      },
      {
        tag: 'v2.2.0-rc.1',
        prerelease: true,
        assets: archAssets((a) => `containerd-2.2.0-rc.1-linux-${a}.tar.gz`, 'rc'),
      },
      {
        tag: 'v2.9.0',
        draft: true,
        assets: archAssets((a) => `containerd-2.9.0-linux-${a}.tar.gz`, 'draft'),
      },
      {
        tag: 'v2.1.5',
        assets: archAssets((a) => `containerd-2.1.5-linux-${a}.tar.gz`, 'containerd-2.1.5'),
      },
      {
        tag: 'v2.1.4',
        assets: archAssets((a) => `containerd-2.1.4-linux-${a}.tar.gz`, 'containerd-2.1.4'),
      },
      {
        tag: 'v1.7.30',
        assets: archAssets((a) => `containerd-1.7.30-linux-${a}.tar.gz`, 'containerd-1'),
      },
    ],
    ['.sha256sum'],
  );
  gh(
    'google/gvisor',
    [
      { tag: 'release-20260803.0', assets: {} },
      { tag: 'release-20260101.0', assets: {} },
    ],
    [],
  );
  for (const [version, arch] of [
    ['20260803.0', 'x86_64'],
    ['20260803.0', 'aarch64'],
  ] as const) {
    const body = artifact(`gvisor-${version}-${arch}`);
    world.serveFile(`/gvisor/${version}/${arch}/gvisor.tar.bz2`, body);
    world.serveFile(
      `/gvisor/${version}/${arch}/gvisor.tar.bz2.sha512`,
      Buffer.from(`${hexDigest('sha512', body)}  gvisor.tar.bz2\n`),
    );
  }
  gh(
    'containernetworking/plugins',
    [{ tag: 'v1.7.1', assets: archAssets((a) => `cni-plugins-linux-${a}-v1.7.1.tgz`, 'cni') }],
    ['.sha1', '.sha256', '.sha512'],
  );
  // Kubernetes: page 1 has newer minors and a prerelease; the 1.36 patches are on page 2.
  world.serveJson(
    '/gh/repos/kubernetes/kubernetes/releases',
    [
      { tag_name: 'v1.37.0', draft: false, prerelease: false, assets: [] },
      { tag_name: 'v1.36.3-rc.0', draft: false, prerelease: true, assets: [] },
      { tag_name: 'v1.35.9', draft: false, prerelease: false, assets: [] },
    ],
    `<${world.base}/gh/repos/kubernetes/kubernetes/releases-page-2>; rel="next", <${world.base}/x>; rel="last"`,
  );
  world.serveJson('/gh/repos/kubernetes/kubernetes/releases-page-2', [
    { tag_name: 'v1.36.2', draft: false, prerelease: false, assets: [] },
    { tag_name: 'v1.36.1', draft: false, prerelease: false, assets: [] },
  ]);
  for (const arch of ['amd64', 'arm64']) {
    const body = artifact(`kubelet-1.36.2-${arch}`, 200 * 1024);
    const dir = `/k8s/release/v1.36.2/bin/linux/${arch}`;
    world.serveFile(`${dir}/kubelet`, body);
    world.serveFile(`${dir}/kubelet.sha512`, Buffer.from(hexDigest('sha512', body)));
    world.serveFile(`${dir}/kubelet.sha256`, Buffer.from(hexDigest('sha256', body)));
  }
  gh(
    'kubernetes-sigs/cri-tools',
    [
      {
        tag: 'v1.37.0',
        assets: archAssets((a) => `crictl-v1.37.0-linux-${a}.tar.gz`, 'crictl-1.37'),
      },
      {
        tag: 'v1.36.0',
        assets: archAssets((a) => `crictl-v1.36.0-linux-${a}.tar.gz`, 'crictl-1.36'),
      },
    ],
    ['.sha256'],
  );
  gh(
    'coredns/coredns',
    [
      {
        tag: 'v1.13.0',
        prerelease: true,
        assets: archAssets((a) => `coredns_1.13.0_linux_${a}.tgz`, 'coredns-pre'),
      },
      { tag: 'v1.12.3', assets: archAssets((a) => `coredns_1.12.3_linux_${a}.tgz`, 'coredns') },
    ],
    ['.sha256'],
  );
  world.serveJson('/node/index.json', [
    { version: 'v25.0.0' },
    { version: 'v24.11.1' },
    { version: 'v24.9.0' },
    { version: 'v22.1.0' },
  ]);
  const shasums: string[] = [];
  for (const arch of ['x64', 'arm64']) {
    const name = `node-v24.11.1-linux-${arch}.tar.xz`;
    const body = artifact(`node-${arch}`);
    world.serveFile(`/node/v24.11.1/${name}`, body);
    shasums.push(`${hexDigest('sha256', body)}  ${name}`);
  }
  shasums.push(`${'0'.repeat(64)}  node-v24.11.1-darwin-arm64.tar.gz`);
  world.serveFile('/node/v24.11.1/SHASUMS256.txt', Buffer.from(`${shasums.join('\n')}\n`));
  gh(
    'podplane/podmin',
    [
      { tag: 'v0.2.0', assets: { 'podmin-agent-v0.2.0.tar.gz': artifact('agent-0.2.0') } },
      { tag: 'v0.1.0', assets: { 'podmin-agent-v0.1.0.tar.gz': artifact('agent-0.1.0') } },
    ],
    ['.sha512'],
  );
  // Fluent Bit's repository lists every release it ever published; Debian's archive the
  // current libpq5 among the distribution's other packages.
  for (const arch of ['amd64', 'arm64']) {
    for (const version of ['4.2.1', '5.0.0~rc1', '5.0.2', '5.0.10', '6.0.0']) {
      world.addDebPackage('fluentbit', { package: 'fluent-bit', version, architecture: arch });
    }
    world.addDebPackage('debian-archive', {
      package: 'libpq-dev',
      version: '17.6-0+deb13u1',
      architecture: arch,
    });
    world.addDebPackage('debian-archive', {
      package: 'libpq5',
      version: '17.6-0+deb13u1',
      architecture: arch,
    });
  }
  world.addDebPackage('debian-archive', {
    package: 'tzdata',
    version: '2025b-4+deb13u1',
    architecture: 'all',
  });
  world.serveJson('/registry/v2/pause/tags/list', {
    name: 'pause',
    tags: ['3.9', '3.10', '3.10.1', '3.10.1-rc', 'latest', '4.0.0', 'test'],
  });
}
