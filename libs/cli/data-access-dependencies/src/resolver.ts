import {
  FILE_DEPENDENCIES,
  IMAGE_DEPENDENCIES,
  OTEL_LOGS_DEPENDENCIES,
  dependencyObjectKey,
  type Arch,
  type DesiredFile,
  type DesiredImage,
  type FileDependency,
  type Nat64Kernel,
} from '@podmin/util-dependencies';
import { DebianPackageResolver } from './debian-package-resolver';
import { GithubReleases } from './github-releases';
import type { FetchFunction } from './http';
import { resolveImage } from './image-resolver';
import { readImageKernel, resolveJoolFiles } from './jool-resolver';
import { templateBases, withDefaultEndpoints, type ReleaseEndpoints } from './release-endpoints';
import { ReleaseFileResolver } from './release-file-resolver';
import { UpstreamHttp } from './upstream-http';

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

/**
 * Resolves the catalog against upstream release APIs: the greatest acceptable version of each
 * dependency (prereleases, drafts and other majors rejected), its per-architecture artifact URL,
 * the publisher's digest (SHA-512 where offered, else the strongest offered) and, where the
 * publisher lists it, the exact size. Release files: release-file-resolver.ts; Debian packages:
 * debian-package-resolver.ts; Jool: jool-resolver.ts; images: image-resolver.ts.
 */
export class DependencyResolver {
  private readonly endpoints: ReleaseEndpoints;
  private readonly http: UpstreamHttp;
  private readonly github: GithubReleases;
  private readonly releaseFiles: ReleaseFileResolver;
  private readonly debianPackages: DebianPackageResolver;

  constructor(private readonly options: DependencyResolverOptions) {
    this.endpoints = withDefaultEndpoints(options.endpoints);
    this.http = new UpstreamHttp(options.fetch ?? fetch, options.timeoutMs ?? 30_000);
    this.github = new GithubReleases(this.http, {
      apiBase: this.endpoints.githubApi,
      maxPages: options.maxReleasePages ?? 5,
      ...(options.githubToken === undefined ? {} : { token: options.githubToken }),
    });
    const bases = templateBases(this.endpoints);
    this.releaseFiles = new ReleaseFileResolver({
      http: this.http,
      github: this.github,
      bases,
      cliVersion: options.cliVersion,
    });
    this.debianPackages = new DebianPackageResolver(this.http, bases);
  }

  /** Every catalog file for every architecture in `archs`, in catalog order. */
  async resolveFiles(archs: readonly Arch[]): Promise<DesiredFile[]> {
    const perDependency = await Promise.all(
      FILE_DEPENDENCIES.map((dependency) =>
        dependency.name === 'podmin-agent' && this.options.agent !== undefined
          ? Promise.resolve(agentFiles(dependency, this.options.agent, archs))
          : this.releaseFiles.resolve(dependency, archs),
      ),
    );
    return perDependency.flat();
  }

  /**
   * The exact kernel an official Debian 13 AMI boots first, read from the Build item of its
   * immutable, dated EC2 image manifest on Debian's cloud image site.
   */
  imageKernel(arch: Arch, imageName: string): Promise<Nat64Kernel> {
    return readImageKernel(this.http, this.endpoints.debianCloud, arch, imageName);
  }

  /**
   * The jool-builds module archive for each NAT64 kernel: the greatest stable Jool 4 release
   * built for exactly that kernel ABI, its architecture's archive and the SHA-256 digest the
   * release's `SHA256SUMS` records for it.
   */
  resolveJool(kernels: readonly Nat64Kernel[]): Promise<DesiredFile[]> {
    return resolveJoolFiles(this.http, this.github, kernels);
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
      for (const arch of archs) files.push(await this.debianPackages.resolve(dependency, arch));
    }
    return files;
  }

  /** Every catalog image at its greatest acceptable tag (digest comes from the image port). */
  async resolveImages(): Promise<DesiredImage[]> {
    return Promise.all(
      IMAGE_DEPENDENCIES.map((image) => resolveImage(this.http, this.endpoints.registries, image)),
    );
  }
}

/** The locally built agent (`--agent-source`) in place of the published one, per architecture. */
function agentFiles(
  dependency: FileDependency,
  agent: AgentArtifact,
  archs: readonly Arch[],
): DesiredFile[] {
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
