import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlobSender, ClientGoneError, ClientStalledError } from './blob-sender';
import { RateLimitedLog } from './rate-limited-log';
import { OCI_BLOB_CONTENT_TYPE, REGISTRY_API_VERSION_HEADER } from './http-headers';
import { parseRangeHeader } from './range';
import { parseRegistryRoute } from './registry-route';
import { RegistryService } from './registry.service';
import { REGISTRY_LOGGER } from './registry.ports';
import type { StructuredLogger } from './registry.ports';

/**
 * The distribution pull API over HTTP: converts requests to {@link RegistryService} calls and
 * results to headers and bodies. Every path and method lands here so that writes, listing and
 * unknown endpoints get OCI error bodies from the one exception filter.
 */
@Controller()
export class RegistryHttpController {
  private readonly sendFailures = new RateLimitedLog();

  constructor(
    @Inject(RegistryService) private readonly registry: RegistryService,
    @Inject(BlobSender) private readonly sender: BlobSender,
    @Inject(REGISTRY_LOGGER) private readonly logger: StructuredLogger,
  ) {}

  /** Serves `GET`/`HEAD` of `/v2/`, manifests and blobs; anything else throws a RegistryError. */
  @All('{*path}')
  async serve(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const route = parseRegistryRoute(method, rawPath(req));
    const head = method === 'HEAD';
    res.setHeader(REGISTRY_API_VERSION_HEADER, 'registry/2.0');
    if (route.kind === 'base') {
      send(res, 200, { 'Content-Type': 'application/json' }, Buffer.from('{}'));
      return;
    }
    if (route.kind === 'manifest') {
      const manifest = await this.registry.manifest(
        route.name,
        route.reference,
        req.headers.accept,
        !head,
      );
      send(
        res,
        200,
        {
          'Content-Type': manifest.mediaType,
          'Content-Length': String(manifest.size),
          'Docker-Content-Digest': manifest.digest,
          ETag: `"${manifest.digest}"`,
        },
        manifest.body,
      );
      return;
    }
    const headers: Record<string, string> = {
      'Content-Type': OCI_BLOB_CONTENT_TYPE,
      'Docker-Content-Digest': route.digest,
      'Accept-Ranges': 'bytes',
      ETag: `"${route.digest}"`,
    };
    if (head) {
      const info = await this.registry.blobInfo(route.name, route.digest);
      send(res, 200, { ...headers, 'Content-Length': String(info.size) }, undefined);
      return;
    }
    // Admitted before the blob is opened or any header written, so a refusal is still a 503.
    const lease = this.sender.admit();
    let blob;
    try {
      blob = await this.registry.openBlob(
        route.name,
        route.digest,
        parseRangeHeader(req.headers.range),
      );
    } catch (err) {
      lease.release(true);
      throw err;
    }
    if (blob.range === undefined) {
      res.writeHead(200, { ...headers, 'Content-Length': String(blob.size) });
    } else {
      res.writeHead(206, {
        ...headers,
        'Content-Length': String(blob.range.end - blob.range.start + 1),
        'Content-Range': `bytes ${blob.range.start}-${blob.range.end}/${blob.size}`,
      });
    }
    try {
      await this.sender.send(blob.body, res, blob.verifyAgainst, lease);
    } catch (err) {
      // Headers are gone: the only safe signal left is a connection cut short of Content-Length.
      res.destroy();
      const fields = { repository: route.name, digest: route.digest, error: describe(err) };
      // Any local process can hang up or stop reading at will: that is debug, never a line per
      // client at the default level. Real failures (a corrupt blob, the bucket) stay errors, rate-limited.
      if (err instanceof ClientGoneError || err instanceof ClientStalledError)
        this.logger.event('debug', 'send blob', fields);
      else this.sendFailures.event(this.logger, 'error', 'send blob', fields);
    }
  }
}

/** The request path as sent, without query, never percent-decoded. */
export function rawPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: Buffer | undefined,
): void {
  res.writeHead(
    status,
    body === undefined ? headers : { ...headers, 'Content-Length': String(body.length) },
  );
  res.end(body);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : 'unknown error';
}
