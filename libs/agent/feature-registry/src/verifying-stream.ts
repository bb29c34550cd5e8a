import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { createDigester, parseDigest } from '@podmin/util-oci';
import type { Digester } from '@podmin/util-oci';

/** Raised at the end of a stream whose bytes do not hash to the expected digest. */
export class DigestMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`stored blob ${expected} hashes to ${actual}`);
    this.name = 'DigestMismatchError';
  }
}

/**
 * Passes bytes through while hashing them and holds back the most recent chunk until the
 * end: only when the whole content hashes to `expected` is that last chunk released, so a
 * client that was told `Content-Length` never receives the complete (wrong) body.
 */
export class DigestVerifyingStream extends Transform {
  private readonly digester: Digester;
  private held: Buffer | undefined;

  constructor(private readonly expected: string) {
    super();
    this.digester = createDigester(parseDigest(expected).algorithm);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.digester.update(chunk);
    const previous = this.held;
    this.held = chunk;
    callback(null, previous);
  }

  override _flush(callback: TransformCallback): void {
    const actual = this.digester.digest();
    if (actual !== this.expected) {
      callback(new DigestMismatchError(this.expected, actual));
      return;
    }
    callback(null, this.held);
  }
}
