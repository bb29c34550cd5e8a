import { Catch, HttpException, Inject } from '@nestjs/common';
import { PodminError } from '@podmin/util-errors';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REGISTRY_API_VERSION_HEADER } from './http-headers';
import { rawPath } from './registry.http-controller';
import { RegistryError } from './registry-error';
import { RateLimitedLog } from './rate-limited-log';
import { RETRY_AFTER_SECONDS } from './transfer-budget';
import { REGISTRY_LOGGER } from './registry.ports';
import type { StructuredLogger } from './registry.ports';

/** Error codes of the OCI distribution spec that this registry returns, plus UNKNOWN for 500s. */
export type OciErrorCode =
  | 'BLOB_UNKNOWN'
  | 'DIGEST_INVALID'
  | 'MANIFEST_UNKNOWN'
  | 'NAME_INVALID'
  | 'NAME_UNKNOWN'
  | 'TAG_INVALID'
  | 'UNSUPPORTED'
  | 'UNAVAILABLE'
  | 'TOOMANYREQUESTS'
  | 'UNKNOWN';

/** The HTTP status, OCI error code and extra headers a refusal is answered with. */
export interface OciResponse {
  /** HTTP status. */
  status: number;
  /** OCI error code of the body. */
  code: OciErrorCode;
  /** Extra response headers, e.g. `Allow` on 405 or `Content-Range` on 416. */
  headers: Record<string, string>;
}

/** Maps a registry refusal to its OCI response: the one table of statuses and codes. */
export function ociResponse(err: RegistryError): OciResponse {
  const plain = (status: number, code: OciErrorCode): OciResponse => ({
    status,
    code,
    headers: {},
  });
  switch (err.refusal) {
    case 'READ_ONLY':
      return { status: 405, code: 'UNSUPPORTED', headers: { Allow: 'GET, HEAD' } };
    case 'ENDPOINT_UNSUPPORTED':
      return plain(404, 'UNSUPPORTED');
    case 'NAME_INVALID':
      return plain(400, 'NAME_INVALID');
    case 'NAME_UNKNOWN':
      return plain(404, 'NAME_UNKNOWN');
    case 'TAG_INVALID':
      return plain(400, 'TAG_INVALID');
    case 'DIGEST_INVALID':
      return plain(400, 'DIGEST_INVALID');
    case 'MANIFEST_UNKNOWN':
      return plain(404, 'MANIFEST_UNKNOWN');
    case 'BLOB_UNKNOWN':
      return plain(404, 'BLOB_UNKNOWN');
    case 'RANGE_NOT_SATISFIABLE':
      return {
        status: 416,
        code: 'UNSUPPORTED',
        headers: err.size === undefined ? {} : { 'Content-Range': `bytes */${err.size}` },
      };
    case 'MANIFEST_CORRUPT':
      // Never serve bytes that do not match the digest the client will check them against.
      return plain(500, 'BLOB_UNKNOWN');
    case 'MANIFEST_TOO_LARGE':
    case 'INDEX_INVALID':
      return plain(500, 'UNKNOWN');
    case 'BUSY':
      // Unavailable for a moment, not broken: clients (containerd) retry after Retry-After.
      return {
        status: 503,
        code: 'TOOMANYREQUESTS',
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      };
    default:
      return unreachable(err.refusal);
  }
}

/**
 * True for a store failure that says the bucket cannot be used now (gone, unreachable, access
 * withdrawn) rather than that the requested content is missing: pulls should retry, not give up.
 */
function isBucketUnavailable(err: unknown): err is PodminError {
  return (
    err instanceof PodminError &&
    (err.code === 'BUCKET_UNAVAILABLE' ||
      err.code === 'SERVICE_UNAVAILABLE' ||
      err.code === 'ACCESS_DENIED')
  );
}

/** The OCI error body: `{"errors":[{"code","message","detail"?}]}`. */
export function ociErrorBody(code: OciErrorCode, message: string, detail?: unknown): string {
  return JSON.stringify({
    errors: [detail === undefined ? { code, message } : { code, message, detail }],
  });
}

/**
 * The one place errors become HTTP responses: a RegistryError is answered by
 * {@link ociResponse} with its message; anything else is a 500 `UNKNOWN` with a generic
 * message, logged with its stack. When the response has already started, the connection is
 * cut instead.
 */
@Catch()
export class OciErrorFilter implements ExceptionFilter {
  private readonly busyLog = new RateLimitedLog();

  constructor(@Inject(REGISTRY_LOGGER) private readonly logger: StructuredLogger) {}

  /** Maps `exception` to an OCI error response. */
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<ServerResponse>();
    const req = http.getRequest<IncomingMessage>();
    const method = req.method;
    const path = rawPath(req).slice(0, 300);
    let status: number;
    let code: OciErrorCode;
    let message: string;
    let headers: Record<string, string> = {};
    if (exception instanceof RegistryError) {
      ({ status, code, headers } = ociResponse(exception));
      message = exception.message;
      // Refusing for load is expected under a flood: one rate-limited line, not one per request.
      if (exception.refusal === 'BUSY')
        this.busyLog.event(this.logger, 'warn', 'refuse request', { status, code, error: message });
      else {
        const level = status >= 500 ? 'error' : 'debug';
        this.logger.event(level, 'refuse request', { method, path, status, code, error: message });
      }
    } else if (isBucketUnavailable(exception)) {
      // distribution's UNAVAILABLE (503): the client may retry once the bucket is back.
      status = 503;
      code = 'UNAVAILABLE';
      message = 'the cluster bucket is unavailable; retry later';
      headers = { 'Retry-After': '5' };
      this.logger.event('warn', 'refuse request', {
        method,
        path,
        status,
        code,
        error: exception.message,
      });
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
      code = 'UNSUPPORTED';
      message = exception.message;
    } else {
      status = 500;
      code = 'UNKNOWN';
      message = 'internal error';
      this.logger.event('error', 'serve request', { method, path, error: exception });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = Buffer.from(ociErrorBody(code, message));
    res.writeHead(status, {
      ...headers,
      [REGISTRY_API_VERSION_HEADER]: 'registry/2.0',
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
    });
    res.end(body);
  }
}

function unreachable(refusal: never): never {
  throw new Error(`unmapped registry refusal ${String(refusal)}`);
}
