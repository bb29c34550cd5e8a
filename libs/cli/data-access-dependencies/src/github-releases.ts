import { trimSlashes } from './release-endpoints';
import { badListing, type UpstreamHttp } from './upstream-http';

/** One asset of a GitHub release. */
export interface ReleaseAsset {
  name: string;
  url: string;
  size: number;
  /** GitHub's own `sha256:` digest of the asset, when it reports one. */
  digest?: string;
}

/** One GitHub release as the resolver reads it. */
export interface GithubRelease {
  tag: string;
  draft: boolean;
  prerelease: boolean;
  assets: ReleaseAsset[];
}

/** Where and how the GitHub REST API is read. */
export interface GithubReleasesOptions {
  /** The API root. */
  apiBase: string;
  /** Sent as a bearer token (raises the rate limit). */
  token?: string;
  /** Pages of 100 releases read per repository. */
  maxPages: number;
}

/** Lists a repository's GitHub releases, newest first, following the `Link` header's pages. */
export class GithubReleases {
  constructor(
    private readonly http: UpstreamHttp,
    private readonly options: GithubReleasesOptions,
  ) {}

  /** Up to `maxPages` pages of `repo`'s releases (drafts and prereleases included). */
  async list(repo: string): Promise<GithubRelease[]> {
    const headers: Record<string, string> = {
      accept: 'application/vnd.github+json',
      'user-agent': 'podmin',
      'x-github-api-version': '2022-11-28',
    };
    if (this.options.token !== undefined) {
      headers['authorization'] = `Bearer ${this.options.token}`;
    }
    const releases: GithubRelease[] = [];
    let url: string | undefined =
      `${trimSlashes(this.options.apiBase)}/repos/${repo}/releases?per_page=100`;
    for (let page = 0; url !== undefined && page < this.options.maxPages; page++) {
      const result: Awaited<ReturnType<UpstreamHttp['listing']>> = await this.http.listing(
        url,
        headers,
      );
      releases.push(...readGithubReleases(result.json, url));
      url = nextLink(result.headers.get('link'));
    }
    return releases;
  }
}

/** True when `item` is an object whose `fields` have the given `typeof` types. */
function hasFields(
  item: unknown,
  fields: Readonly<Record<string, 'string' | 'boolean' | 'number'>>,
): item is Record<string, unknown> {
  if (item === null || typeof item !== 'object') return false;
  const record = item as Record<string, unknown>;
  return Object.entries(fields).every(([key, type]) => typeof record[key] === type);
}

function readGithubReleases(json: unknown, url: string): GithubRelease[] {
  if (!Array.isArray(json)) throw badListing(url, 'expected an array of releases');
  return json.map((r: unknown, i) => {
    if (
      !hasFields(r, { tag_name: 'string', draft: 'boolean', prerelease: 'boolean' }) ||
      !Array.isArray(r['assets'])
    ) {
      throw badListing(url, `release ${i} lacks tag_name, draft, prerelease or assets`);
    }
    const assets = (r['assets'] as unknown[]).map((asset: unknown, j): ReleaseAsset => {
      if (!hasFields(asset, { name: 'string', browser_download_url: 'string', size: 'number' })) {
        throw badListing(url, `release ${i} asset ${j} lacks name, browser_download_url or size`);
      }
      const digest = asset['digest'];
      return {
        name: asset['name'] as string,
        url: asset['browser_download_url'] as string,
        size: asset['size'] as number,
        ...(typeof digest === 'string' ? { digest } : {}),
      };
    });
    return {
      tag: r['tag_name'] as string,
      draft: r['draft'] as boolean,
      prerelease: r['prerelease'] as boolean,
      assets,
    };
  });
}

/** The `rel="next"` URL of a `Link` header, if any. */
function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="next"/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}
