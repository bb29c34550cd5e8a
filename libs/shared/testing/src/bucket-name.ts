import { randomBytes } from 'node:crypto';

const MAX_BUCKET_NAME_LENGTH = 63;

/**
 * Returns a fresh S3 bucket name (3–63 of `a-z 0-9 -`, alphanumeric at both ends) that starts
 * with a sanitised `prefix`, so parallel suites never share a bucket.
 */
export function uniqueBucketName(prefix: string): string {
  const suffix = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const room = MAX_BUCKET_NAME_LENGTH - suffix.length - 1;
  const head = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, room)
    .replace(/-+$/, '');
  return head === '' ? `podmin-${suffix}` : `${head}-${suffix}`;
}
