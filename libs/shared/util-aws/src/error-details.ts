/** Node.js errno codes that mean the service could not be reached (no answer was read). */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/** Name, HTTP status, message and Node.js errno of an SDK or network error, as far as known. */
export interface AwsErrorDetails {
  /** The service's error code (`Code` of XML services such as S3), else the error's name. */
  name: string | undefined;
  status: number | undefined;
  message: string;
  errno: string | undefined;
}

/**
 * Reads what an AWS SDK v3 error carries without depending on a service's exception classes.
 * Anything that is not an object gives only a message.
 */
export function awsErrorDetails(err: unknown): AwsErrorDetails {
  if (typeof err !== 'object' || err === null) {
    return { name: undefined, status: undefined, message: String(err), errno: undefined };
  }
  const shape = err as {
    name?: unknown;
    Code?: unknown;
    message?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  return {
    name:
      typeof shape.Code === 'string'
        ? shape.Code
        : typeof shape.name === 'string'
          ? shape.name
          : undefined,
    status:
      typeof shape.$metadata?.httpStatusCode === 'number'
        ? shape.$metadata.httpStatusCode
        : undefined,
    message: typeof shape.message === 'string' ? shape.message : 'unknown error',
    errno: typeof shape.code === 'string' ? shape.code : undefined,
  };
}

/** `Name, HTTP 403`: the parts of an error's details worth quoting in a message. */
export function describeAwsError(details: Pick<AwsErrorDetails, 'name' | 'status'>): string {
  return [details.name, details.status === undefined ? undefined : `HTTP ${details.status}`]
    .filter(Boolean)
    .join(', ');
}
