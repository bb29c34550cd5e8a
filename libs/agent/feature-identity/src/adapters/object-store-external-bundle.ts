import { checkS3BucketName } from '@podmin/util-names';
import { hasCode } from '@podmin/util-errors';
import type { GetOptions, StoredObject } from '@podmin/data-access-object-store';
import { assertValidKey } from '@podmin/data-access-object-store';
import { IdentityError } from '../identity-error';
import type { ExternalBundle, ExternalBundleContent } from '../identity.ports';

/** Largest external bundle read back (it holds at most two small PEM certificates). */
const MAX_BUNDLE_BYTES = 64 * 1024;

/** The object operations the external bundle needs (an S3ObjectStore on the destination bucket fits). */
export interface ExternalBundleObjects {
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}

/** A parsed `s3://BUCKET/KEY` location. */
export interface S3Location {
  bucket: string;
  key: string;
}

/** Parses `--workload-ca-publish s3://BUCKET/KEY`; INVALID_ARGUMENT names what is wrong. */
export function parseS3Url(url: string): S3Location {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  const bucket = match?.[1] ?? '';
  const key = match?.[2] ?? '';
  const bucketProblem = checkS3BucketName(bucket);
  if (!match || bucketProblem !== undefined) {
    throw new IdentityError(
      'INVALID_ARGUMENT',
      `--workload-ca-publish ${JSON.stringify(url)}: must be s3://BUCKET/KEY with a valid bucket name${match && bucketProblem !== undefined ? ` (the bucket name ${bucketProblem})` : ''}`,
      { fault: 'user' },
    );
  }
  try {
    assertValidKey(key);
  } catch (err) {
    throw new IdentityError(
      'INVALID_ARGUMENT',
      `--workload-ca-publish ${JSON.stringify(url)}: invalid object key`,
      { cause: err, fault: 'user' },
    );
  }
  return { bucket, key };
}

/** {@link ExternalBundle} on one exact object of an object store. */
export class ObjectStoreExternalBundle implements ExternalBundle {
  readonly location: string;

  constructor(
    private readonly objects: ExternalBundleObjects,
    private readonly target: S3Location,
  ) {
    this.location = `s3://${target.bucket}/${target.key}`;
  }

  /**
   * Reads the bundle; undefined when the object does not exist yet. S3 answers a read of a
   * missing key with 403, not 404, to a caller without ListBucket, and the node role holds only
   * GetObject and PutObject on this one key (infra/aws iam.tf). A denied read is therefore taken
   * as absent, and the create-only write that follows decides: it fails with 412 when the
   * object exists after all, and with the same denial when the role truly lacks access.
   */
  async read(): Promise<ExternalBundleContent | undefined> {
    try {
      const obj = await this.objects.get(this.target.key, { maxBytes: MAX_BUNDLE_BYTES });
      return { body: obj.body.toString('utf8'), etag: obj.etag };
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND') || hasCode(err, 'ACCESS_DENIED')) return undefined;
      throw err;
    }
  }

  /** Creates or replaces the bundle by compare-and-swap. */
  write(body: string, etag: string | undefined): Promise<string> {
    return etag === undefined
      ? this.objects.putIfAbsent(this.target.key, body)
      : this.objects.putIfMatch(this.target.key, body, etag);
  }
}
