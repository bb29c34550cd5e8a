import { Readable } from 'node:stream';
import { PodminError } from '@podmin/util-errors';
import { DOCKER_HUB_REGISTRY, MANIFEST_MEDIA_TYPES, MAX_MANIFEST_BYTES } from '@podmin/util-oci';

/** The `fetch` function the client uses (injected in tests). */
export type FetchFunction = typeof fetch;

/** Options of a {@link RegistryClient}. */
export interface RegistryClientOptions {
  /** HTTP implementation; the global `fetch` by default. */
  fetch?: FetchFunction;
  /** Allow plain HTTP to any registry (loopback registries always use HTTP). */
  plainHttp?: boolean;
  /** Deadline of one manifest or token request, in milliseconds (default 60 s). */
  requestTimeoutMs?: number;
  /**
   * Tests only: the base URL (`http://127.0.0.1:<port>`) every registry host is reached at, so an
   * image keeps its upstream name (and mirror path) while a loopback test registry serves it.
   */
  baseUrlOverride?: string;
}

/** A manifest as the registry served it. */
export interface FetchedManifest {
  /** The exact bytes (their digest is the manifest's digest). */
  bytes: Buffer;
  /** `Content-Type` of the response. */
  contentType: string | undefined;
  /** `Docker-Content-Digest` of the response, when sent. */
  digestHeader: string | undefined;
}

/** A blob download in progress. */
export interface FetchedBlob {
  /** The body. */
  stream: Readable;
  /** `Content-Length`, when sent. */
  size: number | undefined;
}

const MAX_TOKEN_BYTES = 1024 * 1024;

/**
 * A pull-only client of the distribution (registry v2) API: manifests with content
 * negotiation for OCI and Docker schema 2 types, streamed blobs, and anonymous bearer-token
 * authentication (a 401 with `WWW-Authenticate: Bearer realm=…,service=…,scope=…` is answered
 * by asking the realm for a token and retrying). HTTPS except for loopback registries or with
 * `plainHttp`.
 */
export class RegistryClient {
  private readonly fetchFn: FetchFunction;
  private readonly tokens = new Map<string, string>();

  constructor(private readonly options: RegistryClientOptions = {}) {
    this.fetchFn = options.fetch ?? fetch;
  }

  /** Base URL of a registry host: Docker Hub's API host for `docker.io`. */
  baseUrl(registry: string): string {
    if (this.options.baseUrlOverride !== undefined) {
      return this.options.baseUrlOverride.replace(/\/+$/, '');
    }
    const host = registry === DOCKER_HUB_REGISTRY ? 'registry-1.docker.io' : registry;
    const scheme = this.options.plainHttp === true || isLoopbackHost(host) ? 'http' : 'https';
    return `${scheme}://${host}`;
  }

  /** Fetches a manifest by tag or digest (bounded to 4 MiB). */
  async getManifest(
    registry: string,
    repository: string,
    reference: string,
  ): Promise<FetchedManifest> {
    const url = `${this.baseUrl(registry)}/v2/${repository}/manifests/${reference}`;
    const response = await this.request(url, repository, {
      headers: { Accept: MANIFEST_MEDIA_TYPES.join(', ') },
      timeout: true,
    });
    const bytes = await readBounded(
      response,
      MAX_MANIFEST_BYTES,
      `manifest ${repository}:${reference}`,
    );
    return {
      bytes,
      contentType: response.headers.get('content-type')?.split(';')[0]?.trim(),
      digestHeader: response.headers.get('docker-content-digest') ?? undefined,
    };
  }

  /** Opens a blob for streaming (redirects to storage are followed). */
  async openBlob(registry: string, repository: string, digest: string): Promise<FetchedBlob> {
    const url = `${this.baseUrl(registry)}/v2/${repository}/blobs/${digest}`;
    const response = await this.request(url, repository, { headers: {}, timeout: false });
    if (response.body === null) {
      throw new PodminError('IO_ERROR', `pulling blob ${digest} of ${repository}: empty response`);
    }
    const length = response.headers.get('content-length');
    return {
      stream: Readable.fromWeb(response.body),
      size: length === null ? undefined : Number(length),
    };
  }

  private async request(
    url: string,
    repository: string,
    init: { headers: Record<string, string>; timeout: boolean },
  ): Promise<Response> {
    const host = new URL(url).host;
    const scope = `repository:${repository}:pull`;
    const send = async (): Promise<Response> => {
      const token = this.tokens.get(`${host} ${scope}`);
      return this.send(url, {
        headers: { ...init.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        ...(init.timeout
          ? { signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 60_000) }
          : {}),
      });
    };
    let response = await send();
    if (response.status === 401) {
      const challenge = response.headers.get('www-authenticate');
      await response.body?.cancel();
      await this.authenticate(host, scope, challenge, url);
      response = await send();
    }
    if (!response.ok) {
      const text = await readBounded(response, 64 * 1024, url).catch(() => Buffer.alloc(0));
      const code =
        response.status === 404
          ? 'NOT_FOUND'
          : response.status === 401 || response.status === 403
            ? 'ACCESS_DENIED'
            : 'IO_ERROR';
      throw new PodminError(
        code,
        `requesting ${url}: HTTP ${response.status} ${registryErrorText(text)}`.trim(),
        code === 'ACCESS_DENIED'
          ? { hint: 'podmin pulls anonymously; the image must be public' }
          : {},
      );
    }
    return response;
  }

  private async authenticate(
    host: string,
    scope: string,
    challenge: string | null,
    url: string,
  ): Promise<void> {
    const parsed = parseBearerChallenge(challenge ?? '');
    if (parsed === undefined) {
      throw new PodminError(
        'ACCESS_DENIED',
        `requesting ${url}: the registry asks for ${challenge ?? 'credentials'}, and podmin pulls anonymously with bearer tokens only`,
        { hint: 'the image must be public' },
      );
    }
    const realm = new URL(parsed.realm);
    if (
      realm.protocol !== 'https:' &&
      !(
        realm.protocol === 'http:' &&
        (this.options.plainHttp === true || isLoopbackHost(realm.host))
      )
    ) {
      throw new PodminError(
        'ACCESS_DENIED',
        `requesting ${url}: token realm ${parsed.realm} is not HTTPS`,
      );
    }
    if (parsed.service !== undefined) realm.searchParams.set('service', parsed.service);
    realm.searchParams.set('scope', parsed.scope ?? scope);
    const response = await this.send(realm.toString(), {
      headers: {},
      signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 60_000),
    });
    const body = await readBounded(response, MAX_TOKEN_BYTES, `token from ${realm.host}`);
    if (!response.ok) {
      throw new PodminError(
        'ACCESS_DENIED',
        `requesting a token from ${realm.origin}${realm.pathname}: HTTP ${response.status}`,
      );
    }
    let token: unknown;
    try {
      const json = JSON.parse(body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = json.token ?? json.access_token;
    } catch (err) {
      throw new PodminError('IO_ERROR', `reading the token from ${realm.origin}: not JSON`, {
        cause: err,
      });
    }
    if (typeof token !== 'string' || token === '') {
      throw new PodminError(
        'IO_ERROR',
        `reading the token from ${realm.origin}: no "token" in the answer`,
      );
    }
    this.tokens.set(`${host} ${scope}`, token);
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchFn(url, { ...init, redirect: 'follow' });
    } catch (err) {
      const reason =
        err instanceof Error
          ? ((err.cause as Error | undefined)?.message ?? err.message)
          : String(err);
      throw new PodminError('IO_ERROR', `requesting ${url}: ${reason}`, {
        cause: err,
        hint: url.startsWith('https:') ? 'a registry without TLS needs --plain-http' : undefined,
      });
    }
  }
}

/** The parameters of a `Bearer` challenge; undefined for another scheme. */
export function parseBearerChallenge(
  header: string,
): { realm: string; service: string | undefined; scope: string | undefined } | undefined {
  const match = /^\s*Bearer\s+(.*)$/i.exec(header);
  if (match === null) return undefined;
  const params = new Map<string, string>();
  for (const part of (match[1] ?? '').matchAll(/([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) {
    params.set((part[1] ?? '').toLowerCase(), part[2] ?? part[3] ?? '');
  }
  const realm = params.get('realm');
  if (realm === undefined || !URL.canParse(realm)) return undefined;
  return { realm, service: params.get('service'), scope: params.get('scope') };
}

/** True for `localhost`, `127.0.0.0/8` and `[::1]`, with or without a port. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

async function readBounded(response: Response, maxBytes: number, what: string): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new PodminError(
      'IO_ERROR',
      `reading ${what}: ${declared} bytes is over the ${maxBytes}-byte limit`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (response.body === null) return Buffer.alloc(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > maxBytes) {
      throw new PodminError('IO_ERROR', `reading ${what}: over the ${maxBytes}-byte limit`);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function registryErrorText(body: Buffer): string {
  try {
    const json = JSON.parse(body.toString('utf8')) as {
      errors?: Array<{ code?: string; message?: string }>;
    };
    return (json.errors ?? []).map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim()).join('; ');
  } catch {
    return body.toString('utf8').slice(0, 200);
  }
}
