import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { artifact, hexDigest, targz } from './fake-artifacts';
import {
  debianImageManifest,
  debPackagesStanza,
  debPoolPath,
  type FakeAptRepository,
  type FakeDebPackage,
} from './fake-debian';
import { layDefaultUpstreams } from './fake-upstream-world';

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
    const pool = debPoolPath(deb);
    this.file(`/${repository}/${pool}`, body);
    const stanza = debPackagesStanza(repository, deb, pool, body);
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
      body: debianImageManifest(build, arch, kernelRelease),
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
      .map(([name, body]) => `${hexDigest('sha256', body)}  ${name}`)
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
      const digest = hexDigest(suffix.startsWith('.sha512') ? 'sha512' : 'sha256', body);
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
          asset['digest'] = `sha256:${hexDigest('sha256', body)}`;
        }
      }
    }
    const list = this.files.get(`${path.slice(0, path.lastIndexOf('/'))}/SHASUMS256.txt`);
    if (list !== undefined) {
      list.body = Buffer.from(
        list.body
          .toString()
          .split('\n')
          .map((line) =>
            line.endsWith(`  ${name}`) ? `${hexDigest('sha256', body)}  ${name}` : line,
          )
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
        digest: `sha256:${hexDigest('sha256', body)}`,
      });
    };
    for (const [name, body] of Object.entries(release.assets)) {
      add(name, body);
      for (const suffix of checksumSuffixes) {
        const algorithm = suffix.startsWith('.sha512') ? 'sha512' : 'sha256';
        add(`${name}${suffix}`, Buffer.from(`${hexDigest(algorithm, body)}  ${name}\n`));
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
    layDefaultUpstreams({
      base: this.base,
      serveFile: (path, body) => this.file(path, body),
      serveJson: (path, body, link) =>
        this.json.set(path, link === undefined ? { body } : { body, link }),
      addRelease: (repo, release, suffixes) => this.addRelease(repo, release, suffixes),
      addDebPackage: (repository, deb) => this.addDebPackage(repository, deb),
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
