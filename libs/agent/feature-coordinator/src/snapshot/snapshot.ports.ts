import type { GetOptions, StoredObject } from '@podmin/data-access-object-store';

/**
 * The conditional object operations the snapshot needs on the cluster bucket (an `ObjectStore`
 * fits). Errors are PodminErrors: OBJECT_NOT_FOUND, PRECONDITION_FAILED, CONFLICT (S3's 409,
 * retry), OBJECT_TOO_LARGE; anything else means the bucket cannot be used right now.
 */
export interface SnapshotStore {
  /** Reads an object (bounded by `maxBytes`) with its ETag; OBJECT_NOT_FOUND when absent. */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Creates an object only if absent (`If-None-Match: *`); PRECONDITION_FAILED when it exists. */
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  /** Replaces an object only if its ETag is still `etag` (`If-Match`); PRECONDITION_FAILED otherwise. */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}
