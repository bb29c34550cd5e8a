import { S3Client } from '@aws-sdk/client-s3';

/** How to build an S3 client for a context. */
export interface S3ClientOptions {
  /** AWS region of the bucket, e.g. `eu-west-1`. */
  region: string;
  /** Named profile from the shared AWS config/credentials files; default chain otherwise. */
  profile?: string;
  /** Custom endpoint (an S3-compatible server or emulator); turns on path-style addressing. */
  endpoint?: string;
  /** Use the regional dual-stack (IPv4 and IPv6) endpoint; ignored when `endpoint` is set. */
  dualStack?: boolean;
  /** Static credentials, for emulators and tests; the default provider chain when omitted. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /**
   * Bounds on one request: connecting, and a socket silent this long (a bucket that accepts
   * connections but never answers). Unset: the SDK's (none), as an interactive CLI wants.
   */
  timeouts?: AwsRequestTimeouts;
  /** Attempts per request, the SDK's retries included (SDK default 3). */
  maxAttempts?: number;
}

/** How long an AWS request may take to connect, and stay silent, before it fails. */
export interface AwsRequestTimeouts {
  readonly connectMs: number;
  readonly idleMs: number;
}

/**
 * Creates an S3 client. Credentials come from the SDK's default provider chain (environment,
 * shared files honouring `profile`, SSO, instance metadata) unless given explicitly.
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  return new S3Client({
    region: options.region,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.endpoint === undefined
      ? options.dualStack === true
        ? { useDualstackEndpoint: true }
        : {}
      : { endpoint: options.endpoint, forcePathStyle: true }),
    ...(options.timeouts === undefined
      ? {}
      : {
          requestHandler: {
            connectionTimeout: options.timeouts.connectMs,
            socketTimeout: options.timeouts.idleMs,
          },
        }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
}
