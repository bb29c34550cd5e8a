import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** The `index.json` annotation naming a tag in an OCI image layout. */
const REF_NAME = 'org.opencontainers.image.ref.name';

interface LayoutDescriptor {
  mediaType?: string;
  digest: string;
  annotations?: Record<string, string>;
}

/**
 * A read-only loopback registry (distribution API: manifests by tag or digest, blobs by digest)
 * that serves one OCI image layout directory — the local image store's layout of an image
 * `podmin build` wrote — under `repository`. Tests point an image's upstream at it so the image
 * keeps its upstream name. `substitute` makes it answer one reference with another manifest,
 * like an upstream whose tag or digest no longer holds what was pinned. Every request is logged.
 */
export class LayoutRegistry {
  /** `METHOD path` of every request, in order. */
  readonly requests: string[] = [];
  /** Requested tag or digest → digest of the manifest actually served for it. */
  readonly substitute = new Map<string, string>();
  private server: http.Server | undefined;

  constructor(
    private readonly layoutDir: string,
    private readonly repository: string,
  ) {}

  /** Listens on an ephemeral 127.0.0.1 port; resolves to its base URL. */
  async start(): Promise<string> {
    const server = http.createServer((req, res) => {
      this.requests.push(`${req.method ?? 'GET'} ${req.url ?? ''}`);
      this.answer(req.url ?? '', req.method === 'HEAD').then(
        ({ status, headers, body }) => {
          res.writeHead(status, headers);
          res.end(body);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this.url;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    if (this.server === undefined) throw new Error('the layout registry is not started');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops listening. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }

  private async answer(
    url: string,
    head: boolean,
  ): Promise<{ status: number; headers: Record<string, string>; body?: Buffer }> {
    if (url === '/v2/' || url === '/v2') return { status: 200, headers: {} };
    const prefix = `/v2/${this.repository}/`;
    if (!url.startsWith(prefix)) return notFound();
    const [kind, ref, ...rest] = url.slice(prefix.length).split('/');
    if (ref === undefined || rest.length > 0) return notFound();
    const index = JSON.parse(await readFile(path.join(this.layoutDir, 'index.json'), 'utf8')) as {
      manifests: LayoutDescriptor[];
    };
    let digest = ref.startsWith('sha256:')
      ? ref
      : index.manifests.find((d) => d.annotations?.[REF_NAME] === ref)?.digest;
    if (kind === 'manifests') digest = this.substitute.get(ref) ?? digest;
    if (digest === undefined || !/^sha256:[0-9a-f]{64}$/.test(digest)) return notFound();
    let body: Buffer;
    try {
      body = await readFile(path.join(this.layoutDir, 'blobs', 'sha256', digest.slice(7)));
    } catch {
      return notFound();
    }
    const headers: Record<string, string> = {
      'content-length': String(body.length),
      'docker-content-digest': digest,
    };
    if (kind === 'manifests') {
      const parsed = JSON.parse(body.toString('utf8')) as { mediaType?: string };
      headers['content-type'] = parsed.mediaType ?? 'application/vnd.oci.image.manifest.v1+json';
    } else if (kind === 'blobs') {
      headers['content-type'] = 'application/octet-stream';
    } else {
      return notFound();
    }
    return head ? { status: 200, headers } : { status: 200, headers, body };
  }
}

function notFound(): { status: number; headers: Record<string, string>; body: Buffer } {
  return {
    status: 404,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"not found"}]}'),
  };
}
