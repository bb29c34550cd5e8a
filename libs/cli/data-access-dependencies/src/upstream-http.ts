import { PodminError } from '@podmin/util-errors';
import {
  getBytes,
  getJson,
  getText,
  type FetchFunction,
  type HttpReadOptions,
  type HttpText,
} from './http';

const MAX_LISTING_BYTES = 16 * 1024 * 1024;
const MAX_CHECKSUM_BYTES = 256 * 1024;

/** The resolver's bounded reads of upstreams, with one fetch function and timeout. */
export class UpstreamHttp {
  private readonly base: Omit<HttpReadOptions, 'maxBytes'>;

  constructor(fetchFunction: FetchFunction, timeoutMs: number) {
    this.base = { fetch: fetchFunction, timeoutMs };
  }

  /** A JSON listing (releases, versions, tags, an image manifest) of at most 16 MiB. */
  listing(url: string, headers?: Record<string, string>): Promise<HttpText & { json: unknown }> {
    return getJson(url, {
      ...this.base,
      ...(headers === undefined ? {} : { headers }),
      maxBytes: MAX_LISTING_BYTES,
    });
  }

  /** A checksum file's text (at most 256 KiB); undefined for 404 when `allowMissing`. */
  async checksumText(url: string, allowMissing: boolean): Promise<string | undefined> {
    const result = await getText(url, { ...this.base, maxBytes: MAX_CHECKSUM_BYTES, allowMissing });
    return result?.text;
  }

  /** A body of at most `maxBytes` as bytes; undefined for 404. */
  async bytesIfPresent(url: string, maxBytes: number): Promise<Buffer | undefined> {
    const result = await getBytes(url, { ...this.base, maxBytes, allowMissing: true });
    return result?.bytes;
  }

  /** A body of at most `maxBytes` as text; IO_ERROR for 404. */
  async text(url: string, maxBytes: number): Promise<string> {
    const result = await getText(url, { ...this.base, maxBytes });
    if (result === undefined) throw new PodminError('IO_ERROR', `querying ${url}: not found`);
    return result.text;
  }
}

/** The error for a listing that is not the shape its publisher documents. */
export function badListing(url: string, why: string): PodminError {
  return new PodminError('IO_ERROR', `reading the release listing ${url}: ${why}`);
}
