import { PodminError, type PodminErrorCode } from '@podmin/util-errors';
import { NETWORK_ERROR_CODES, awsErrorDetails, describeAwsError } from './error-details';

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

/** Hints a service's adapter gives instead of the defaults of {@link translateCommonAwsError}. */
export interface CommonAwsErrorHints {
  /** On ACCESS_DENIED (default: check the credentials and that their policy allows the service). */
  accessDenied?: string;
  /** When the service was not reached (default: none). */
  unreachable?: string;
}

/**
 * The fallback classification of the AWS JSON services' adapters (SSM, Secrets Manager, KMS),
 * after their service-specific names: refused credentials → ACCESS_DENIED, network failures and
 * server errors → IO_ERROR, other client errors → INVALID_ARGUMENT. Each adapter translates
 * only through its own function, which ends here.
 */
export function translateCommonAwsError(
  err: unknown,
  doing: string,
  service: string,
  hints: CommonAwsErrorHints = {},
): PodminError {
  if (err instanceof PodminError) return err;
  const { name, status, message, errno } = awsErrorDetails(err);
  const detail = describeAwsError({ name, status });
  let code: PodminErrorCode;
  let why: string;
  let hint: string | undefined;
  if ((name !== undefined && ACCESS_DENIED_NAMES.has(name)) || status === 403) {
    code = 'ACCESS_DENIED';
    why = `access denied by ${service} (${detail})`;
    hint =
      hints.accessDenied ??
      `check the AWS credentials and that their policy allows ${service} on this name`;
  } else if (
    status === undefined &&
    ((errno !== undefined && NETWORK_ERROR_CODES.has(errno)) ||
      name === 'TimeoutError' ||
      name === 'AbortError')
  ) {
    code = 'IO_ERROR';
    why = `cannot reach ${service} (${errno ?? name})`;
    hint = hints.unreachable;
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
