import { PodminError, type PodminErrorCode } from '@podmin/util-errors';

const ACCESS_DENIED = new Set([
  'UnauthorizedOperation',
  'AccessDenied',
  'AccessDeniedException',
  'AuthFailure',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'RequestExpired',
  'CredentialsProviderError',
]);
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'TimeoutError',
  'NetworkingError',
]);

/**
 * Translates an EC2 (AWS SDK v3) or network error into a PodminError, once, in the adapter:
 * authorization failures → ACCESS_DENIED, unreachable endpoints and throttling →
 * SERVICE_UNAVAILABLE, anything else → INTERNAL with the API's own code. Keeps the cause.
 */
export function translateEc2Error(err: unknown, doing: string): PodminError {
  if (err instanceof PodminError) return err;
  const shape = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: unknown;
    Code?: unknown;
    code?: unknown;
    message?: unknown;
  };
  const name =
    typeof shape.Code === 'string' ? shape.Code : typeof shape.name === 'string' ? shape.name : '';
  const errno = typeof shape.code === 'string' ? shape.code : '';
  const message = typeof shape.message === 'string' ? shape.message : String(err);
  let code: PodminErrorCode = 'INTERNAL';
  let hint: string | undefined;
  if (ACCESS_DENIED.has(name)) {
    code = 'ACCESS_DENIED';
    hint = 'check the AWS credentials and that their policy allows the ec2:Describe* calls';
  } else if (
    NETWORK.has(name) ||
    NETWORK.has(errno) ||
    // After retries the SDK wraps a socket error in a plain Error that only names it.
    /\b(?:ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b/.test(
      message,
    ) ||
    /Throttl|RequestLimitExceeded/.test(name)
  ) {
    code = 'SERVICE_UNAVAILABLE';
    hint = 'check the network (and AWS_ENDPOINT_URL_EC2 if set) and try again';
  }
  return new PodminError(code, `${doing}: ${message}${name ? ` (${name})` : ''}`, {
    cause: err,
    ...(hint === undefined ? {} : { hint }),
  });
}
