/**
 * Creates and checks the cluster bucket for `podmin connect`. Errors are PodminErrors:
 * ACCESS_DENIED or BUCKET_UNAVAILABLE naming the step that failed, ALREADY_EXISTS when the
 * name belongs to someone else, INVALID_ARGUMENT when the bucket is in another region.
 */
export interface BucketProvisioner {
  /** Creates the bucket when absent (private), verifies its region; `created` tells which happened. */
  ensureBucket(): Promise<{ created: boolean }>;
  /** Writes, reads back and deletes a probe object under `.podmin-probe/`. */
  probeAccess(): Promise<void>;
  /** Deletes the bucket, which must already be empty (`podmin destroy`); absent is success. */
  deleteBucket(): Promise<void>;
}

/** Key prefix of the objects `probeAccess` writes and removes. */
export const PROBE_PREFIX = '.podmin-probe/';
