import path from 'node:path';
import type { ClusterContext, CliEnvironment } from '@podmin/cli-util-config';
import type { BucketProvisioner, ObjectStore } from '@podmin/data-access-object-store';

/** Where a cluster's bucket lives and how to reach it. */
export type BucketLocation = Pick<ClusterContext, 'provider' | 'region' | 'bucket' | 'profile'>;

/** Opens the object store of a context: a directory for local, S3 for aws (SDK loaded lazily). */
export async function openObjectStore(
  location: BucketLocation,
  env: CliEnvironment,
): Promise<ObjectStore> {
  const lib = await import('@podmin/data-access-object-store');
  if (location.provider === 'local')
    return new lib.LocalDirectoryObjectStore(path.resolve(location.bucket));
  return new lib.S3ObjectStore({ client: await s3Client(location, env), bucket: location.bucket });
}

/** Opens the bucket provisioner used by `connect`. */
export async function openBucketProvisioner(
  location: BucketLocation,
  env: CliEnvironment,
): Promise<BucketProvisioner> {
  const lib = await import('@podmin/data-access-object-store');
  if (location.provider === 'local')
    return new lib.LocalBucketProvisioner(path.resolve(location.bucket));
  return new lib.S3BucketProvisioner({
    client: await s3Client(location, env),
    bucket: location.bucket,
    region: location.region,
  });
}

async function s3Client(location: BucketLocation, env: CliEnvironment) {
  const { createS3Client } = await import('@podmin/data-access-object-store');
  return createS3Client({
    region: location.region,
    ...(location.profile ? { profile: location.profile } : {}),
    ...(env.s3Endpoint ? { endpoint: env.s3Endpoint } : {}),
  });
}
