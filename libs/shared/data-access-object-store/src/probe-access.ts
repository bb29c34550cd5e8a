import { randomBytes } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import { PROBE_PREFIX } from './bucket-provisioner.port';
import type { ObjectStore } from './object-store.port';

/** Source of the random part of probe keys; injectable for tests. */
export type ProbeIdSource = () => string;

/** The default probe id: 16 random hex characters. */
export const randomProbeId: ProbeIdSource = () => randomBytes(8).toString('hex');

/**
 * Checks write (create-only), read and delete access through `store` with one probe object,
 * failing with ACCESS_DENIED or BUCKET_UNAVAILABLE that names the step.
 */
export async function probeStoreAccess(
  store: ObjectStore,
  bucket: string,
  newId: ProbeIdSource,
): Promise<void> {
  const key = `${PROBE_PREFIX}${newId()}`;
  const content = Buffer.from(`podmin access probe ${key}\n`, 'utf8');
  const step = async <T>(name: 'write' | 'read' | 'delete', fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw probeError(name, bucket, key, err);
    }
  };
  await step('write', () => store.putIfAbsent(key, content));
  try {
    const read = await step('read', () => store.get(key, { maxBytes: content.length }));
    if (!read.body.equals(content)) {
      throw new PodminError(
        'BUCKET_UNAVAILABLE',
        `checking read access to ${bucket}: probe object ${key} read back with different content`,
      );
    }
  } catch (err) {
    await store.delete(key).catch(() => undefined);
    throw err;
  }
  await step('delete', () => store.delete(key));
}

function probeError(
  step: 'write' | 'read' | 'delete',
  bucket: string,
  key: string,
  err: unknown,
): PodminError {
  const code =
    err instanceof PodminError && err.code === 'ACCESS_DENIED'
      ? 'ACCESS_DENIED'
      : 'BUCKET_UNAVAILABLE';
  const why = err instanceof Error ? err.message : String(err);
  return new PodminError(
    code,
    `checking ${step} access to ${bucket} with probe object ${key}: ${why}`,
    {
      cause: err,
      hint:
        code === 'ACCESS_DENIED'
          ? `allow ${step === 'write' ? 's3:PutObject' : step === 'read' ? 's3:GetObject' : 's3:DeleteObject'} on the bucket for these credentials`
          : undefined,
    },
  );
}
