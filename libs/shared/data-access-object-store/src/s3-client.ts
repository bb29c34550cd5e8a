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
 *
 * Reads do not ask S3 for its stored checksums (`responseChecksumValidation: WHEN_REQUIRED`;
 * the SDK's default validates a CRC32 of every single-part object it reads, one more pass over
 * every byte of a blob pull): TLS protects the bytes in transit, and what podmin reads is
 * checked by content where it matters — blobs against their digest, payloads against the
 * SHA-512 in their key, the index by its strict parse and, under trust, its signature.
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  return new S3Client({
    ...awsClientConfig(options, { forcePathStyle: true }),
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
}
