import { Catch, HttpException, Inject } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { REGISTRY_API_VERSION_HEADER } from './http-headers';
import { rawPath } from './registry.http-controller';
import { RegistryError, ociErrorBody } from './registry-error';
import type { OciErrorCode } from './registry-error';
import { REGISTRY_LOGGER } from './registry.ports';
import type { StructuredLogger } from './registry.ports';

/**
 * The one place errors become HTTP responses: a RegistryError keeps its status and OCI code;
 * anything else is a 500 `UNKNOWN` with a generic message, logged with its stack. When the
 * response has already started, the connection is cut instead.
 */
@Catch()
export class OciErrorFilter implements ExceptionFilter {
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
      ({ status, code, message, headers } = exception);
      const level = status >= 500 ? 'error' : 'debug';
      this.logger.event(level, 'refuse request', { method, path, status, code, error: message });
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
