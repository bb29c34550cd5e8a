/** The object-store port, its value types, key validation and the default read bound. */
export * from './object-store.port';
/** The bucket-provisioning port used by `podmin connect` and the probe key prefix. */
export * from './bucket-provisioner.port';
/** Byte-range resolution and formatting shared by the adapters and their fakes. */
export { assertValidRange, formatRange, resolveRange } from './byte-range';
/** An ObjectBody over a Node.js stream (S3 response bodies, fakes). */
export { readableBody } from './object-body';
/** Entity-tag helpers: S3-style MD5 ETags and tolerant comparison. */
export { md5Etag, etagsEqual } from './etag';
/** The OBJECT_TOO_LARGE error raised by bounded reads. */
export { ObjectTooLargeError } from './errors';
/** The local directory bucket and its key rules. */
export {
  LocalDirectoryObjectStore,
  assertLocalKey,
  compareKeys,
  LOCAL_LOCK_DIR,
  LOCAL_TEMP_PREFIX,
  type LocalDirectoryObjectStoreOptions,
} from './local-directory-object-store';
/** The S3 object store. */
export { S3ObjectStore, type S3ObjectStoreOptions } from './s3-object-store';
/** The single translation of S3/SDK errors into PodminErrors. */
export { translateS3Error, type MissingKeyMeaning } from './s3-errors';
/** The S3 client factory (default credential chain, profile, custom endpoint). */
export { createS3Client, type AwsRequestTimeouts, type S3ClientOptions } from './s3-client';
/** Bucket provisioners for the `aws` and `local` providers. */
export {
  S3BucketProvisioner,
  regionOfLocationConstraint,
  type S3BucketProvisionerOptions,
} from './s3-bucket-provisioner';
/** The local bucket provisioner. */
export { LocalBucketProvisioner } from './local-bucket-provisioner';
/** Probe id source type for deterministic probe keys in tests. */
export { type ProbeIdSource } from './probe-access';
