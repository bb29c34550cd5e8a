import { PodminError } from '@podmin/util-errors';
import type { PodminErrorCode } from '@podmin/util-errors';
import { NETWORK_ERROR_CODES, awsErrorDetails, describeAwsError } from '@podmin/util-aws';

/** How to read a "no such key" answer: a missing object, or a failed if-match write. */
export type MissingKeyMeaning = 'OBJECT_NOT_FOUND' | 'PRECONDITION_FAILED';

const NETWORK_ERROR_NAMES = new Set([
  'TimeoutError',
  'NetworkingError',
  'RequestTimeout',
  'AbortError',
]);
const ACCESS_DENIED_NAMES = new Set([
  'AccessDenied',
  'Forbidden',
  'AllAccessDisabled',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'AccountProblem',
  'CredentialsProviderError',
]);

/** Name (error code) and HTTP status of an SDK error, as far as it carries them. */
export function sdkErrorDetails(err: unknown): {
  name: string | undefined;
  status: number | undefined;
} {
  const { name, status } = awsErrorDetails(err);
  return { name, status };
}

/**
 * Translates an S3 (AWS SDK v3) or network error into a PodminError, once, in the adapter:
 * NoSuchKey/NotFound/404 → OBJECT_NOT_FOUND (or PRECONDITION_FAILED for if-match writes),
 * PreconditionFailed/412 and other 409s → PRECONDITION_FAILED, ConditionalRequestConflict (409)
 * → CONFLICT (a concurrent conditional write was in flight: S3 says retry; it is not "exists"),
 * AccessDenied/403 → ACCESS_DENIED, NoSuchBucket, network and server errors → BUCKET_UNAVAILABLE.
 * The original error is kept as `cause`.
 */
export function translateS3Error(
  err: unknown,
  doing: string,
  missingKey: MissingKeyMeaning = 'OBJECT_NOT_FOUND',
): PodminError {
  if (err instanceof PodminError) {
    return err;
  }
  const { code, why } = classify(err, missingKey);
  return new PodminError(code, `${doing}: ${why}`, { cause: err, ...(hintFor(code) ?? {}) });
}

function classify(
  err: unknown,
  missingKey: MissingKeyMeaning,
): { code: PodminErrorCode; why: string } {
  const { name, status, errno } = awsErrorDetails(err);
  const detail = describeAwsError({ name, status });
  if (name === 'NoSuchBucket') {
    return { code: 'BUCKET_UNAVAILABLE', why: 'the bucket does not exist' };
  }
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
    return missingKey === 'OBJECT_NOT_FOUND'
      ? { code: 'OBJECT_NOT_FOUND', why: 'it does not exist' }
      : { code: 'PRECONDITION_FAILED', why: 'it does not exist' };
  }
  if (name === 'PreconditionFailed' || status === 412) {
    return { code: 'PRECONDITION_FAILED', why: 'its current version does not match the condition' };
  }
  if (name === 'ConditionalRequestConflict') {
    return {
      code: 'CONFLICT',
      why: 'a concurrent conditional write to the same key was in progress (retry)',
    };
  }
  // Other 409s (BucketNotEmpty, OperationAborted) are a state that does not allow the request.
  if (status === 409) {
    return { code: 'PRECONDITION_FAILED', why: `the current state conflicts (${detail})` };
  }
  if ((name !== undefined && ACCESS_DENIED_NAMES.has(name)) || status === 403) {
    return { code: 'ACCESS_DENIED', why: `access denied (${detail})` };
  }
  if (status === 301 || name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed') {
    return { code: 'BUCKET_UNAVAILABLE', why: `the bucket is in another region (${detail})` };
  }
  if (
    status === undefined &&
    ((errno !== undefined && NETWORK_ERROR_CODES.has(errno)) ||
      (name !== undefined && NETWORK_ERROR_NAMES.has(name)))
  ) {
    return {
      code: 'BUCKET_UNAVAILABLE',
      why: `cannot reach the object store (${errno ?? name ?? 'network error'})`,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'BUCKET_UNAVAILABLE', why: detail === '' ? message : `${message} (${detail})` };
}

function hintFor(code: PodminErrorCode): { hint: string } | undefined {
  switch (code) {
    case 'ACCESS_DENIED':
      return { hint: 'check the AWS credentials and that their policy allows this bucket and key' };
    default:
      return undefined;
  }
}
