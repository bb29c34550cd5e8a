import path from 'node:path';
import type { ClusterContext, CliEnvironment } from '@podmin/cli-util-config';
import type { BucketProvisioner, ObjectStore } from '@podmin/data-access-object-store';

/** Where a cluster's bucket lives and how to reach it. */
export type BucketLocation = Pick<ClusterContext, 'region' | 'bucket' | 'profile'>;

/** How one provider reaches a context's bucket: its object store and its provisioner. */
export interface BucketAccess {
  /** Opens the bucket's object store. */
  openObjectStore(location: BucketLocation): Promise<ObjectStore>;
  /** Opens the bucket provisioner used by `connect` and `destroy`. */
  openBucketProvisioner(location: BucketLocation): Promise<BucketProvisioner>;
}

/** The local provider's bucket: a directory with object semantics. */
export const directoryBucketAccess: BucketAccess = {
  async openObjectStore(location) {
    const lib = await import('@podmin/data-access-object-store');
    return new lib.LocalDirectoryObjectStore(path.resolve(location.bucket));
  },
  async openBucketProvisioner(location) {
    const lib = await import('@podmin/data-access-object-store');
    return new lib.LocalBucketProvisioner(path.resolve(location.bucket));
  },
};

/** The aws provider's bucket: S3 in the context's region (the SDK loaded only when used). */
export function s3BucketAccess(env: CliEnvironment): BucketAccess {
  return {
    async openObjectStore(location) {
      const lib = await import('@podmin/data-access-object-store');
      return new lib.S3ObjectStore({
        client: await s3Client(location, env),
        bucket: location.bucket,
      });
    },
    async openBucketProvisioner(location) {
      const lib = await import('@podmin/data-access-object-store');
      return new lib.S3BucketProvisioner({
        client: await s3Client(location, env),
        bucket: location.bucket,
        region: location.region,
      });
    },
  };
}

async function s3Client(location: BucketLocation, env: CliEnvironment) {
  const { createS3Client } = await import('@podmin/data-access-object-store');
  return createS3Client({
    region: location.region,
    ...(location.profile ? { profile: location.profile } : {}),
    ...(env.s3Endpoint ? { endpoint: env.s3Endpoint } : {}),
  });
}
