import { LocalDirectoryObjectStore } from './local-directory-object-store';
import type { ObjectStore } from './object-store.port';
import { createS3Client } from './s3-client';
import { S3ObjectStore } from './s3-object-store';

/** Where a bucket is and how to reach it. */
export interface BucketLocation {
  /** `local`: a directory; `aws`: an S3 bucket. */
  provider: 'aws' | 'local';
  /** S3 bucket name (aws) or bucket directory (local). */
  bucket: string;
  /** AWS region of the bucket (aws). */
  region: string;
  /** S3 endpoint override (an S3-compatible server or emulator); path-style addressing then. */
  endpoint?: string | undefined;
  /** Use the regional dual-stack S3 endpoint when no `endpoint` is set. */
  dualStack?: boolean;
}

/**
 * Opens a bucket's object store, the one way every process does: a directory for `local`,
 * S3 with the default credential chain for `aws`.
 */
export function openObjectStore(location: BucketLocation): ObjectStore {
  if (location.provider === 'local') return new LocalDirectoryObjectStore(location.bucket);
  return new S3ObjectStore({
    client: createS3Client({
      region: location.region,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      ...(location.dualStack === true ? { dualStack: true } : {}),
    }),
    bucket: location.bucket,
  });
}
