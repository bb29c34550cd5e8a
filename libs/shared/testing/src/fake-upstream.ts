import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

/**
 * Base URLs of the upstreams, shaped like `ReleaseEndpoints` of
 * `@podmin/cli-data-access-dependencies` (a shared library may not import a CLI one).
 */
export interface FakeUpstreamEndpoints {
  githubApi: string;
  k8sDownload: string;
  gvisorDownload: string;
  nodeDist: string;
  registries: Record<string, string>;
  debianCloud: string;
  debianArchive: string;
  fluentbitPackages: string;
}

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

/** Options of {@link FakeUpstream.addJoolBuild}. */
export interface FakeJoolBuild {
  joolVersion: string;
  kernelAbi: string;
  /** Changes the `metadata.json` of one architecture's archive (to publish a wrong build). */
  metadata?: (arch: string) => Record<string, unknown>;
  draft?: boolean;
}

/** One served file. */
interface Served {
  body: Buffer;
  /** Responses still to cut short (headers promise the full length, the socket closes early). */
  truncate: number;
}

/** A GitHub release the fake publishes. */
export interface FakeRelease {
  tag: string;
  draft?: boolean;
  prerelease?: boolean;
  /** Asset name → content; checksum assets are generated from `checksums`. */
  assets: Record<string, Buffer>;
}

/** Deterministic artifact bytes, large enough to cross a progress step. */
export function artifact(label: string, bytes = 64 * 1024): Buffer {
  const seed = Buffer.from(`${label}\n`);
  return Buffer.concat(Array.from({ length: Math.ceil(bytes / seed.length) }, () => seed)).subarray(
    0,
    bytes,
  );
}

/** A gzip-compressed tar of regular files (mode 0644), in the given order. */
async function targz(files: Record<string, string>): Promise<Buffer> {
  const tar = pack();
  for (const [name, text] of Object.entries(files)) tar.entry({ name, mode: 0o644 }, text);
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const hex = (algorithm: 'sha256' | 'sha512', body: Buffer) =>
  createHash(algorithm).update(body).digest('hex');

/**
 * A loopback HTTP server shaped like the upstreams the resolver reads: GitHub's releases API
 * (paginated with `Link`, drafts, prereleases, other majors, `browser_download_url` assets and
 * checksum assets), dl.k8s.io, gVisor's release bucket, the Node.js dist index and a registry
 * tags list. Tests can cut responses short and corrupt files, and read request logs.
 */
export class FakeUpstream {
  readonly requests: string[] = [];
  /** Most requests for artifacts in flight at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly files = new Map<string, Served>();
  private readonly json = new Map<string, { body: unknown; link?: string }>();
  private readonly aptIndexes = new Map<string, string[]>();
  private server: http.Server | undefined;
  base = '';

  /** Starts the server and lays out the default upstream world. */
  async start(): Promise<this> {
    const server = http.createServer((req, res) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.layout();
    return this;
  }

  /** Stops the server. */
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /**
   * Endpoints for the resolver: every upstream under {@link base}, as the CLI's
   * `PODMIN_TEST_DEPENDENCY_BASE_URL` seam maps them.
   */
  get endpoints(): FakeUpstreamEndpoints {
    return {
      githubApi: `${this.base}/gh`,
      k8sDownload: `${this.base}/k8s`,
      gvisorDownload: `${this.base}/gvisor`,
      nodeDist: `${this.base}/node`,
      registries: { 'registry.k8s.io': `${this.base}/registry` },
      debianCloud: `${this.base}/debian`,
      debianArchive: `${this.base}/debian-archive`,
      fluentbitPackages: `${this.base}/fluentbit`,
    };
  }

  /**
   * Lists a binary package in a fake apt repository's `dists/trixie/main/binary-<arch>`
   * index, in the real `Packages` format (Debian's archive publishes `Packages.gz` only, Fluent
   * Bit's repository the uncompressed `Packages`), and serves its `.deb` at its pool path.
   * `Architecture: all` goes into both architectures' indexes. Returns the pool path served.
   */
  addDebPackage(repository: FakeAptRepository, deb: FakeDebPackage): string {
    const body = deb.body ?? artifact(`${deb.package}-${deb.version}-${deb.architecture}`);
    const fileVersion = deb.version.replace(/^\d+:/, '');
    const source = deb.package === 'libpq5' ? 'postgresql-17' : deb.package;
    const pool = `pool/main/${source.startsWith('lib') ? source.slice(0, 4) : source.charAt(0)}/${source}/${deb.package}_${fileVersion}_${deb.architecture}.deb`;
    this.file(`/${repository}/${pool}`, body);
    const stanza = [
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
            `SHA256: ${hex('sha256', body)}`,
            ...(deb.sha512 === false ? [] : [`SHA512: ${hex('sha512', body)}`]),
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
            `SHA256: ${hex('sha256', body)}`,
            ...(deb.sha512 === true ? [`SHA512: ${hex('sha512', body)}`] : []),
          ]),
    ].join('\n');
    const archs = deb.architecture === 'all' ? ['amd64', 'arm64'] : [deb.architecture];
    for (const arch of archs) {
      const dir = `/${repository}/dists/trixie/main/binary-${arch}`;
      const stanzas = this.aptIndexes.get(dir) ?? [];
      stanzas.push(stanza);
      this.aptIndexes.set(dir, stanzas);
      const text = Buffer.from(`${stanzas.join('\n\n')}\n`);
      if (repository === 'debian-archive') this.file(`${dir}/Packages.gz`, gzipSync(text));
      else this.file(`${dir}/Packages`, text);
    }
    return `/${repository}/${pool}`;
  }

  /**
   * Publishes the immutable EC2 image manifest of a Debian 13 build the way cloud.debian.org
   * does (a v1 List with one Build item listing its packages, and an Upload item), whose one
   * concrete kernel is `linux-image-<kernelRelease>`.
   */
  addDebianImage(build: string, arch: string, kernelRelease: string): void {
    this.json.set(`/debian/trixie/${build}/debian-13-ec2-${arch}-${build}.json`, {
      body: {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
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
          },
          {
            apiVersion: 'cloud.debian.org/v1alpha1',
            kind: 'Upload',
            metadata: {},
            data: {
              provider: 'cloud.debian.org',
              ref: `trixie/${build}/debian-13-ec2-${arch}-${build}.tar.xz`,
            },
          },
        ],
      },
    });
  }

  /**
   * Publishes a podplane/jool-builds release: a real gzip tar per architecture holding the
   * module files and `metadata.json`, and `SHA256SUMS` over them. Returns the archive bytes.
   */
  async addJoolBuild(build: FakeJoolBuild): Promise<Record<string, Buffer>> {
    const archives: Record<string, Buffer> = {};
    for (const arch of ['amd64', 'arm64']) {
      const metadata = {
        jool_version: build.joolVersion,
        kernel_abi: build.kernelAbi,
        kernel_release: `${build.kernelAbi}-cloud-${arch}`,
        architecture: arch,
        modules: ['jool_common.ko', 'jool.ko', 'jool_siit.ko'],
        notices: ['COPYING', 'NOTICE', 'SOURCE'],
        ...build.metadata?.(arch),
      };
      archives[`jool-${build.joolVersion}-${build.kernelAbi}-${arch}.tar.gz`] = await targz({
        COPYING: 'GPLv2\n',
        NOTICE: 'Jool notice\n',
        SOURCE: 'Corresponding source\n',
        'jool.ko': `jool ${arch}\n`,
        'jool_common.ko': `jool_common ${arch}\n`,
        'jool_siit.ko': `jool_siit ${arch}\n`,
        'metadata.json': `${JSON.stringify(metadata)}\n`,
      });
    }
    const sums = Object.entries(archives)
      .map(([name, body]) => `${hex('sha256', body)}  ${name}`)
      .join('\n');
    this.addRelease(
      'podplane/jool-builds',
      {
        tag: `jool-${build.joolVersion}-kernel-${build.kernelAbi}`,
        ...(build.draft === undefined ? {} : { draft: build.draft }),
        assets: { ...archives, SHA256SUMS: Buffer.from(`${sums}\n`) },
      },
      [],
    );
    return archives;
  }

  /** Cuts the next `count` responses of `path` short. */
  truncateNext(path: string, count: number): void {
    this.served(path).truncate = count;
  }

  /** Replaces the bytes served at `path` (its checksum files keep the old digests). */
  replaceBody(path: string, body: Buffer): void {
    this.served(path).body = body;
  }

  /**
   * Replaces the bytes served at `path` and keeps the publisher's digests true: its checksum
   * files (`<path>.sha512`, `.sha256`, `.sha256sum`) and its line in the directory's
   * `SHASUMS256.txt` and, for a GitHub asset, the size and digest its release lists are
   * rewritten, for a test that installs what it downloads.
   */
  replaceArtifact(path: string, body: Buffer): void {
    this.served(path).body = body;
    const name = path.slice(path.lastIndexOf('/') + 1);
    for (const suffix of ['.sha512', '.sha512sum', '.sha256', '.sha256sum']) {
      const sums = this.files.get(`${path}${suffix}`);
      if (sums === undefined) continue;
      const digest = hex(suffix.startsWith('.sha512') ? 'sha512' : 'sha256', body);
      // Keep the file's shape: a bare digest (dl.k8s.io) or `<digest>  <name>`.
      sums.body = Buffer.from(sums.body.toString().includes(' ') ? `${digest}  ${name}\n` : digest);
    }
    // GitHub's listing records each asset's size and SHA-256 too.
    for (const { body: releases } of this.json.values()) {
      if (!Array.isArray(releases)) continue;
      for (const release of releases as Array<{ assets?: unknown }>) {
        if (!Array.isArray(release.assets)) continue;
        for (const asset of release.assets as Array<Record<string, unknown>>) {
          if (asset['browser_download_url'] !== `${this.base}${path}`) continue;
          asset['size'] = body.length;
          asset['digest'] = `sha256:${hex('sha256', body)}`;
        }
      }
    }
    const list = this.files.get(`${path.slice(0, path.lastIndexOf('/'))}/SHASUMS256.txt`);
    if (list !== undefined) {
      list.body = Buffer.from(
        list.body
          .toString()
          .split('\n')
          .map((line) => (line.endsWith(`  ${name}`) ? `${hex('sha256', body)}  ${name}` : line))
          .join('\n'),
      );
    }
  }

  /** Publishes another GitHub release of `repo` (listed first, as GitHub lists newest first). */
  addRelease(repo: string, release: FakeRelease, checksumSuffixes: string[]): void {
    const key = `/gh/repos/${repo}/releases`;
    const listing = (this.json.get(key)?.body as unknown[] | undefined) ?? [];
    this.json.set(key, {
      ...this.json.get(key),
      body: [this.releaseJson(repo, release, checksumSuffixes), ...listing],
    });
  }

  /** Replaces the tags the registry lists for `repository` (e.g. only `3.10` of pause). */
  setRegistryTags(repository: string, tags: string[]): void {
    this.json.set(`/registry/v2/${repository}/tags/list`, { body: { name: repository, tags } });
  }

  /** Requests for exactly `path`. */
  count(path: string): number {
    return this.requests.filter((r) => r === path).length;
  }

  private served(path: string): Served {
    const served = this.files.get(path);
    if (served === undefined) throw new Error(`fake upstream serves nothing at ${path}`);
    return served;
  }

  private file(path: string, body: Buffer): void {
    this.files.set(path, { body, truncate: 0 });
  }

  private releaseJson(repo: string, release: FakeRelease, checksumSuffixes: string[]): unknown {
    const assets: Array<{
      name: string;
      browser_download_url: string;
      size: number;
      digest: string;
    }> = [];
    const add = (name: string, body: Buffer) => {
      const path = `/gh-dl/${repo}/${release.tag}/${name}`;
      this.file(path, body);
      assets.push({
        name,
        browser_download_url: `${this.base}${path}`,
        size: body.length,
        digest: `sha256:${hex('sha256', body)}`,
      });
    };
    for (const [name, body] of Object.entries(release.assets)) {
      add(name, body);
      for (const suffix of checksumSuffixes) {
        const algorithm = suffix.startsWith('.sha512') ? 'sha512' : 'sha256';
        add(`${name}${suffix}`, Buffer.from(`${hex(algorithm, body)}  ${name}\n`));
      }
    }
    return {
      url: `${this.base}/gh/repos/${repo}/releases/1`,
      tag_name: release.tag,
      name: release.tag,
      draft: release.draft ?? false,
      prerelease: release.prerelease ?? false,
      assets,
    };
  }

  private layout(): void {
    const archAssets = (
      template: (arch: string) => string,
      label: string,
      archs = ['amd64', 'arm64'],
    ) => Object.fromEntries(archs.map((a) => [template(a), artifact(`${label}-${a}`)]));
    const gh = (repo: string, releases: FakeRelease[], suffixes: string[]) => {
      for (const r of [...releases].reverse()) this.addRelease(repo, r, suffixes);
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
      this.file(`/gvisor/${version}/${arch}/gvisor.tar.bz2`, body);
      this.file(
        `/gvisor/${version}/${arch}/gvisor.tar.bz2.sha512`,
        Buffer.from(`${hex('sha512', body)}  gvisor.tar.bz2\n`),
      );
    }
    gh(
      'containernetworking/plugins',
      [{ tag: 'v1.7.1', assets: archAssets((a) => `cni-plugins-linux-${a}-v1.7.1.tgz`, 'cni') }],
      ['.sha1', '.sha256', '.sha512'],
    );
    // Kubernetes: page 1 has newer minors and a prerelease; the 1.36 patches are on page 2.
    this.json.set('/gh/repos/kubernetes/kubernetes/releases', {
      body: [
        { tag_name: 'v1.37.0', draft: false, prerelease: false, assets: [] },
        { tag_name: 'v1.36.3-rc.0', draft: false, prerelease: true, assets: [] },
        { tag_name: 'v1.35.9', draft: false, prerelease: false, assets: [] },
      ],
      link: `<${this.base}/gh/repos/kubernetes/kubernetes/releases-page-2>; rel="next", <${this.base}/x>; rel="last"`,
    });
    this.json.set('/gh/repos/kubernetes/kubernetes/releases-page-2', {
      body: [
        { tag_name: 'v1.36.2', draft: false, prerelease: false, assets: [] },
        { tag_name: 'v1.36.1', draft: false, prerelease: false, assets: [] },
      ],
    });
    for (const arch of ['amd64', 'arm64']) {
      const body = artifact(`kubelet-1.36.2-${arch}`, 200 * 1024);
      const dir = `/k8s/release/v1.36.2/bin/linux/${arch}`;
      this.file(`${dir}/kubelet`, body);
      this.file(`${dir}/kubelet.sha512`, Buffer.from(hex('sha512', body)));
      this.file(`${dir}/kubelet.sha256`, Buffer.from(hex('sha256', body)));
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
    this.json.set('/node/index.json', {
      body: [
        { version: 'v25.0.0' },
        { version: 'v24.11.1' },
        { version: 'v24.9.0' },
        { version: 'v22.1.0' },
      ],
    });
    const shasums: string[] = [];
    for (const arch of ['x64', 'arm64']) {
      const name = `node-v24.11.1-linux-${arch}.tar.xz`;
      const body = artifact(`node-${arch}`);
      this.file(`/node/v24.11.1/${name}`, body);
      shasums.push(`${hex('sha256', body)}  ${name}`);
    }
    shasums.push(`${'0'.repeat(64)}  node-v24.11.1-darwin-arm64.tar.gz`);
    this.file('/node/v24.11.1/SHASUMS256.txt', Buffer.from(`${shasums.join('\n')}\n`));
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
        this.addDebPackage('fluentbit', { package: 'fluent-bit', version, architecture: arch });
      }
      this.addDebPackage('debian-archive', {
        package: 'libpq-dev',
        version: '17.6-0+deb13u1',
        architecture: arch,
      });
      this.addDebPackage('debian-archive', {
        package: 'libpq5',
        version: '17.6-0+deb13u1',
        architecture: arch,
      });
    }
    this.addDebPackage('debian-archive', {
      package: 'tzdata',
      version: '2025b-4+deb13u1',
      architecture: 'all',
    });
    this.json.set('/registry/v2/pause/tags/list', {
      body: {
        name: 'pause',
        tags: ['3.9', '3.10', '3.10.1', '3.10.1-rc', 'latest', '4.0.0', 'test'],
      },
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.base);
    const path = url.pathname;
    this.requests.push(path);
    const json = this.json.get(path);
    if (json !== undefined) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (json.link !== undefined) headers['link'] = json.link;
      res.writeHead(200, headers).end(JSON.stringify(json.body));
      return;
    }
    const served = this.files.get(path);
    if (served === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => this.inFlight--);
    res.writeHead(200, {
      'content-length': String(served.body.length),
      'content-type': 'application/octet-stream',
    });
    if (served.truncate > 0) {
      served.truncate--;
      res.write(served.body.subarray(0, Math.floor(served.body.length / 2)), () => res.destroy());
      return;
    }
    // Hold artifacts briefly so concurrent transfers overlap and the bound is observable.
    setTimeout(() => res.end(served.body), 20);
  }
}
