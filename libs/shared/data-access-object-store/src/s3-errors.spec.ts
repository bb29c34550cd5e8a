import { NoSuchBucket, NoSuchKey, NotFound, S3ServiceException } from '@aws-sdk/client-s3';
import { PodminError } from '@podmin/util-errors';
import { translateS3Error } from './s3-errors';

/** A service error as the SDK builds it from an S3 error response. */
function serviceError(name: string, status: number): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

/** A Node.js network error as the SDK's HTTP handler rethrows it. */
function networkError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
}

describe('translateS3Error', () => {
  it.each([
    [
      'NoSuchKey',
      new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } }),
      'OBJECT_NOT_FOUND',
    ],
    [
      'HEAD NotFound',
      new NotFound({ message: 'UnknownError', $metadata: { httpStatusCode: 404 } }),
      'OBJECT_NOT_FOUND',
    ],
    ['bare 404', serviceError('Unknown', 404), 'OBJECT_NOT_FOUND'],
    ['PreconditionFailed', serviceError('PreconditionFailed', 412), 'PRECONDITION_FAILED'],
    ['bare 412', serviceError('Unknown', 412), 'PRECONDITION_FAILED'],
    ['BucketNotEmpty', serviceError('BucketNotEmpty', 409), 'PRECONDITION_FAILED'],
    ['ConditionalRequestConflict', serviceError('ConditionalRequestConflict', 409), 'CONFLICT'],
    ['AccessDenied', serviceError('AccessDenied', 403), 'ACCESS_DENIED'],
    ['bare 403', serviceError('Unknown', 403), 'ACCESS_DENIED'],
    ['InvalidAccessKeyId', serviceError('InvalidAccessKeyId', 403), 'ACCESS_DENIED'],
    [
      'NoSuchBucket',
      new NoSuchBucket({ message: 'no bucket', $metadata: { httpStatusCode: 404 } }),
      'BUCKET_UNAVAILABLE',
    ],
    ['PermanentRedirect', serviceError('PermanentRedirect', 301), 'BUCKET_UNAVAILABLE'],
    ['InternalError', serviceError('InternalError', 500), 'BUCKET_UNAVAILABLE'],
    ['SlowDown', serviceError('SlowDown', 503), 'BUCKET_UNAVAILABLE'],
    ['ECONNREFUSED', networkError('ECONNREFUSED'), 'BUCKET_UNAVAILABLE'],
    ['ENOTFOUND', networkError('ENOTFOUND'), 'BUCKET_UNAVAILABLE'],
    [
      'TimeoutError',
      Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
      'BUCKET_UNAVAILABLE',
    ],
    ['a non-Error value', 'boom', 'BUCKET_UNAVAILABLE'],
  ])('maps %s to %s and keeps the cause', (_label, err, code) => {
    const translated = translateS3Error(err, 'reading object "k" in bucket s3://b');
    expect(translated).toBeInstanceOf(PodminError);
    expect(translated.code).toBe(code);
    expect(translated.cause).toBe(err);
    expect(translated.message).toMatch(/^reading object "k" in bucket s3:\/\/b: /);
  });

  it('maps a missing key to PRECONDITION_FAILED for an if-match write', () => {
    const err = new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } });
    expect(translateS3Error(err, 'replacing', 'PRECONDITION_FAILED').code).toBe(
      'PRECONDITION_FAILED',
    );
    // A missing bucket stays a missing bucket.
    const bucket = new NoSuchBucket({ message: 'no bucket', $metadata: { httpStatusCode: 404 } });
    expect(translateS3Error(bucket, 'replacing', 'PRECONDITION_FAILED').code).toBe(
      'BUCKET_UNAVAILABLE',
    );
  });

  it('passes PodminErrors through unchanged', () => {
    const original = new PodminError('OBJECT_TOO_LARGE', 'reading: too large');
    expect(translateS3Error(original, 'reading')).toBe(original);
  });

  it('hints at credentials for ACCESS_DENIED and names the network error', () => {
    expect(translateS3Error(serviceError('AccessDenied', 403), 'writing').hint).toContain(
      'credentials',
    );
    expect(translateS3Error(networkError('ECONNREFUSED'), 'writing').message).toContain(
      'ECONNREFUSED',
    );
  });
});
