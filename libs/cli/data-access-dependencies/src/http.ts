import { PodminError } from '@podmin/util-errors';

/** The fetch function this library uses (the global one unless injected). */
export type FetchFunction = typeof fetch;

/** Options of one bounded HTTP read. */
export interface HttpReadOptions {
  fetch: FetchFunction;
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
}

/** A successful bounded read. */
export interface HttpText {
  text: string;
  headers: Headers;
}

/**
 * GETs `url` and returns its body as text, or undefined for 404 when `allowMissing`. Other
 * statuses, network failures, timeouts and bodies over `maxBytes` are IO_ERRORs.
 */
export async function getText(
  url: string,
  options: HttpReadOptions & { allowMissing?: boolean },
): Promise<HttpText | undefined> {
  const result = await getBytes(url, options);
  return result === undefined
    ? undefined
    : { text: result.bytes.toString('utf8'), headers: result.headers };
}

/** {@link getText} for a binary body (a compressed index): the exact bytes. */
export async function getBytes(
  url: string,
  options: HttpReadOptions & { allowMissing?: boolean },
): Promise<{ bytes: Buffer; headers: Headers } | undefined> {
  let response: Response;
  try {
    response = await options.fetch(url, {
      headers: options.headers ?? {},
      redirect: 'follow',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    throw new PodminError('IO_ERROR', `querying ${url}: ${describeFetchError(err)}`, {
      cause: err,
      hint: 'Check the network connection and retry.',
    });
  }
  if (response.status === 404 && options.allowMissing === true) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new PodminError('IO_ERROR', `querying ${url}: HTTP ${response.status}`, {
      hint:
        response.status === 403 || response.status === 429
          ? 'The publisher is rate-limiting requests; wait and retry.'
          : 'Retry; if it persists the publisher changed its layout.',
    });
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > options.maxBytes) {
    await response.body?.cancel();
    throw new PodminError(
      'IO_ERROR',
      `querying ${url}: ${declared} bytes is over the ${options.maxBytes}-byte limit`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (response.body !== null) {
    const reader = response.body.getReader();
    for (;;) {
      let part: ChunkRead;
      try {
        part = (await reader.read()) as ChunkRead;
      } catch (err) {
        throw new PodminError('IO_ERROR', `reading ${url}: ${describeFetchError(err)}`, {
          cause: err,
        });
      }
      if (part.done || part.value === undefined) break;
      total += part.value.length;
      if (total > options.maxBytes) {
        await reader.cancel();
        throw new PodminError(
          'IO_ERROR',
          `querying ${url}: the body is over the ${options.maxBytes}-byte limit`,
        );
      }
      chunks.push(Buffer.from(part.value));
    }
  }
  return { bytes: Buffer.concat(chunks), headers: response.headers };
}

/** GETs and parses JSON (bounded); IO_ERROR on anything but a parseable 200. */
export async function getJson(
  url: string,
  options: HttpReadOptions,
): Promise<HttpText & { json: unknown }> {
  const result = await getText(url, options);
  if (result === undefined) throw new PodminError('IO_ERROR', `querying ${url}: not found`);
  try {
    return { ...result, json: JSON.parse(result.text) as unknown };
  } catch (err) {
    throw new PodminError('IO_ERROR', `querying ${url}: the response is not JSON`, { cause: err });
  }
}

/** A readable reason for a fetch failure (undici hides the useful part in `cause`). */
export function describeFetchError(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return 'timed out';
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message !== '') return `${err.message} (${cause.message})`;
    return err.message;
  }
  return String(err);
}

/** One read of a response body stream (the web stream types are not in this lib set). */
interface ChunkRead {
  done: boolean;
  value?: Uint8Array;
}
