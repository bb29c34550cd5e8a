import { PodminError, type PodminErrorCode } from '@podmin/util-errors';
import { NETWORK_ERROR_CODES, awsErrorDetails, describeAwsError } from '@podmin/util-aws';

/** Error names every AWS JSON service uses for refused credentials or permissions. */
export const ACCESS_DENIED_NAMES: ReadonlySet<string> = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
  'IncompleteSignature',
  'ExpiredToken',
  'ExpiredTokenException',
  'CredentialsProviderError',
  'KMSAccessDeniedException',
]);

/**
 * The fallback classification shared by both AWS adapters, after their service-specific names:
 * refused credentials → ACCESS_DENIED, network failures and server errors → IO_ERROR, other
 * client errors → INVALID_ARGUMENT. Each adapter translates only through its own function.
 */
export function translateCommonAwsError(err: unknown, doing: string, service: string): PodminError {
  if (err instanceof PodminError) return err;
  const { name, status, message, errno } = awsErrorDetails(err);
  const detail = describeAwsError({ name, status });
  let code: PodminErrorCode;
  let why: string;
  let hint: string | undefined;
  if ((name !== undefined && ACCESS_DENIED_NAMES.has(name)) || status === 403) {
    code = 'ACCESS_DENIED';
    why = `access denied by ${service} (${detail})`;
    hint = `check the AWS credentials and that their policy allows ${service} on this name`;
  } else if (
    status === undefined &&
    ((errno !== undefined && NETWORK_ERROR_CODES.has(errno)) ||
      name === 'TimeoutError' ||
      name === 'AbortError')
  ) {
    code = 'IO_ERROR';
    why = `cannot reach ${service} (${errno ?? name})`;
  } else if (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    name !== 'ThrottlingException'
  ) {
    code = 'INVALID_ARGUMENT';
    why = `${service} rejected the request: ${message} (${detail})`;
  } else {
    code = 'IO_ERROR';
    why =
      detail === '' ? `${service} failed: ${message}` : `${service} failed: ${message} (${detail})`;
  }
  return new PodminError(code, `${doing}: ${why}`, {
    cause: err,
    ...(hint === undefined ? {} : { hint }),
  });
}
