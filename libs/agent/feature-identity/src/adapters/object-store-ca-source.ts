import type { GetOptions, StoredObject } from '@podmin/data-access-object-store';
import { PodminError } from '@podmin/util-errors';
import { MAX_CA_BUNDLE_BYTES } from '@podmin/util-pki';
import { IdentityError } from '../identity-error';
import type { S3Location } from './object-store-external-bundle';

/** The read the exporter CA source needs (an ObjectStore on the `ca=` bucket fits). */
export interface CaSourceObjects {
  get(key: string, options?: GetOptions): Promise<StoredObject>;
}

/**
 * The reader of the exporter's `ca=s3://BUCKET/KEY` object: one exact GET, bounded to the
 * largest bundle accepted, failures named with the object (the code kept).
 */
export function objectStoreCaSource(
  objects: CaSourceObjects,
  location: S3Location,
): () => Promise<Uint8Array> {
  const url = `s3://${location.bucket}/${location.key}`;
  return async () => {
    try {
      return (await objects.get(location.key, { maxBytes: MAX_CA_BUNDLE_BYTES })).body;
    } catch (err) {
      throw new IdentityError(
        err instanceof PodminError ? err.code : 'INTERNAL',
        `ca=${url}: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  };
}
