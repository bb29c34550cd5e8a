import { S3Client } from '@aws-sdk/client-s3';
import { awsClientConfig, type AwsClientOptions, type AwsRequestTimeouts } from '@podmin/util-aws';

/** How to build an S3 client for a context (a custom endpoint turns on path-style addressing). */
export interface S3ClientOptions extends AwsClientOptions {
  /** Attempts per request, the SDK's retries included (SDK default 3). */
  maxAttempts?: number;
}

export type { AwsRequestTimeouts };

/**
 * Creates an S3 client. Credentials come from the SDK's default provider chain (environment,
 * shared files honouring `profile`, SSO, instance metadata) unless given explicitly.
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  return new S3Client({
    ...awsClientConfig(options, { forcePathStyle: true }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
}
