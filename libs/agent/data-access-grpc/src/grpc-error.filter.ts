import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { Metadata, status } from '@grpc/grpc-js';
import { throwError, type Observable } from 'rxjs';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';

/** Maps a podmin error code to a gRPC status (exhaustive). */
export function grpcStatusOf(code: PodminErrorCode): status {
  switch (code) {
    case 'INVALID_ARGUMENT':
    case 'INVALID_MANIFEST':
    case 'CONFIG_INVALID':
      return status.INVALID_ARGUMENT;
    case 'NOT_FOUND':
    case 'OBJECT_NOT_FOUND':
    case 'CONTEXT_NOT_FOUND':
      return status.NOT_FOUND;
    case 'ALREADY_EXISTS':
      return status.ALREADY_EXISTS;
    case 'PRECONDITION_FAILED':
    case 'NO_CONTEXT':
      return status.FAILED_PRECONDITION;
    case 'CONFLICT':
    case 'CONFLICT_RETRIES_EXHAUSTED':
      return status.ABORTED;
    case 'OBJECT_TOO_LARGE':
      return status.RESOURCE_EXHAUSTED;
    case 'ACCESS_DENIED':
      return status.PERMISSION_DENIED;
    case 'BUCKET_UNAVAILABLE':
    case 'SERVICE_UNAVAILABLE':
      return status.UNAVAILABLE;
    case 'IO_ERROR':
    case 'INTERNAL':
      return status.INTERNAL;
  }
}

/** Trailer carrying the exact PodminError code, so a caller sees the code the server threw. */
export const PODMIN_CODE_TRAILER = 'podmin-code';

/** The one gRPC exception filter: PodminErrors keep their message; anything else is INTERNAL and logged. */
@Catch()
export class GrpcErrorFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logUnexpected: (err: unknown) => void) {}

  catch(exception: unknown): Observable<never> {
    if (exception instanceof RpcException) return throwError(() => exception.getError());
    if (exception instanceof PodminError) {
      const metadata = new Metadata();
      metadata.set(PODMIN_CODE_TRAILER, exception.code);
      return throwError(() => ({
        code: grpcStatusOf(exception.code),
        message: exception.message,
        metadata,
      }));
    }
    this.logUnexpected(exception);
    return throwError(() => ({ code: status.INTERNAL, message: 'internal error' }));
  }
}
