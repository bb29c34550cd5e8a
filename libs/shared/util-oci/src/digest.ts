import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { OciFormatError } from './errors';

/** Digest algorithms podmin accepts: the two registered by the OCI image spec. */
export type DigestAlgorithm = 'sha256' | 'sha512';

/** A digest split into its algorithm and lowercase hex encoding. */
export interface ParsedDigest {
  /** Hash algorithm. */
  algorithm: DigestAlgorithm;
  /** Lowercase hex of the hash (64 characters for sha256, 128 for sha512). */
  hex: string;
}

const HEX_LENGTH: Record<DigestAlgorithm, number> = { sha256: 64, sha512: 128 };
const DIGEST_PATTERN = /^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;

/** True when `value` is `sha256:<64 hex>` or `sha512:<128 hex>` (lowercase hex only). */
export function isDigest(value: unknown): boolean {
  return typeof value === 'string' && DIGEST_PATTERN.test(value);
}

/** Splits a digest into algorithm and hex; OciFormatError when it is not a valid digest. */
export function parseDigest(value: string): ParsedDigest {
  if (!isDigest(value)) {
    throw new OciFormatError(
      `parsing digest ${JSON.stringify(value.slice(0, 200))}: must be sha256:<64 lowercase hex> or sha512:<128 lowercase hex>`,
    );
  }
  const colon = value.indexOf(':');
  const algorithm = value.slice(0, colon) as DigestAlgorithm;
  const hex = value.slice(colon + 1);
  if (hex.length !== HEX_LENGTH[algorithm]) {
    throw new OciFormatError(`parsing digest ${value}: wrong length for ${algorithm}`);
  }
  return { algorithm, hex };
}

/** The digest of `data` with `algorithm` (default sha256), as `<algorithm>:<hex>`. */
export function computeDigest(
  data: Buffer | Uint8Array | string,
  algorithm: DigestAlgorithm = 'sha256',
): string {
  return `${algorithm}:${createHash(algorithm).update(data).digest('hex')}`;
}

/** The `sha256:<hex>` digest of `data`. */
export function sha256Digest(data: Buffer | Uint8Array | string): string {
  return computeDigest(data, 'sha256');
}

/** The `sha512:<hex>` digest of `data`. */
export function sha512Digest(data: Buffer | Uint8Array | string): string {
  return computeDigest(data, 'sha512');
}

/** True when `data` hashes to `digest` (with the digest's own algorithm). */
export function matchesDigest(data: Buffer | Uint8Array | string, digest: string): boolean {
  const { algorithm } = parseDigest(digest);
  return computeDigest(data, algorithm) === digest;
}

/** Incremental digest computation for streamed content. */
export interface Digester {
  /** Feeds the next chunk. */
  update(chunk: Buffer | Uint8Array): void;
  /** The final `<algorithm>:<hex>`; call once, after the last update. */
  digest(): string;
}

/** Starts an incremental digest with `algorithm`. */
export function createDigester(algorithm: DigestAlgorithm): Digester {
  const hash: Hash = createHash(algorithm);
  return {
    update: (chunk) => {
      hash.update(chunk);
    },
    digest: () => `${algorithm}:${hash.digest('hex')}`,
  };
}
