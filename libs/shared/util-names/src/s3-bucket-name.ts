/** Shortest and longest S3 bucket names. */
const MIN_LENGTH = 3;
const MAX_LENGTH = 63;
/** Prefixes and suffixes AWS reserves (access points, Object Lambda, S3 Express, table buckets). */
const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];

/**
 * Why `name` is not a valid general-purpose S3 bucket name, or undefined when it is. AWS's
 * rule: 3–63 characters of lowercase letters, digits, dots and hyphens; a letter or digit at
 * both ends; no two adjacent dots; not an IPv4 address; none of the reserved prefixes or
 * suffixes. Dots are allowed (AWS allows them) although they break virtual-hosted TLS.
 */
export function checkS3BucketName(name: string): string | undefined {
  if (name.length < MIN_LENGTH || name.length > MAX_LENGTH) {
    return `must be ${MIN_LENGTH}–${MAX_LENGTH} characters long, not ${name.length}`;
  }
  if (!/^[a-z0-9.-]+$/.test(name)) {
    return 'may contain only lowercase letters, digits, "." and "-"';
  }
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) {
    return 'must begin and end with a lowercase letter or digit';
  }
  if (name.includes('..')) {
    return 'must not contain two adjacent dots';
  }
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) {
    return 'must not be formatted as an IPv4 address';
  }
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix !== undefined) {
    return `must not begin with the reserved prefix "${prefix}"`;
  }
  const suffix = RESERVED_SUFFIXES.find((s) => name.endsWith(s));
  if (suffix !== undefined) {
    return `must not end with the reserved suffix "${suffix}"`;
  }
  return undefined;
}

/** True when `name` is a valid general-purpose S3 bucket name ({@link checkS3BucketName}). */
export function isS3BucketName(name: string): boolean {
  return checkS3BucketName(name) === undefined;
}

/**
 * Parses `s3://BUCKET/KEY` with a valid bucket name and a non-empty key without whitespace;
 * undefined when it is not one.
 */
export function parseS3ObjectUrl(url: string): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)\/(\S+)$/.exec(url);
  if (match === null) return undefined;
  const [, bucket = '', key = ''] = match;
  return isS3BucketName(bucket) ? { bucket, key } : undefined;
}

/** The longest object key {@link isExactObjectKey} accepts. */
export const EXACT_OBJECT_KEY_MAX = 1024;
// S3's safe characters without IAM wildcards (*, ?), policy variables ($) or quotes.
const EXACT_OBJECT_KEY_SEGMENT = /^[A-Za-z0-9!_.()-]+$/;

/** What {@link isExactObjectKey} allows, for error messages. */
export const EXACT_OBJECT_KEY_RULE = `at most ${EXACT_OBJECT_KEY_MAX} characters of A-Z, a-z, 0-9 and !_.()- in /-separated segments, none empty, . or ..`;

/**
 * True for an object key that can become an exact IAM resource and a single-quoted shell or
 * systemd environment value: {@link EXACT_OBJECT_KEY_RULE}.
 */
export function isExactObjectKey(key: string): boolean {
  return (
    key.length <= EXACT_OBJECT_KEY_MAX &&
    key.split('/').every((s) => EXACT_OBJECT_KEY_SEGMENT.test(s) && s !== '.' && s !== '..')
  );
}

/** `s3://BUCKET/KEY` naming one exact object ({@link isExactObjectKey}); undefined otherwise. */
export function parseExactS3Object(url: string): { bucket: string; key: string } | undefined {
  const parsed = parseS3ObjectUrl(url);
  return parsed !== undefined && isExactObjectKey(parsed.key) ? parsed : undefined;
}
