import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { sha256Digest } from '@podmin/util-oci';
import { DigestMismatchError, DigestVerifyingStream } from './verifying-stream';

async function collect(
  chunks: string[],
  digest: string,
): Promise<{ received: string; error: unknown }> {
  let received = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, callback) {
      received += chunk.toString();
      callback();
    },
  });
  const error = await pipeline(
    Readable.from(chunks.map((c) => Buffer.from(c))),
    new DigestVerifyingStream(digest),
    sink,
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { received, error };
}

describe('DigestVerifyingStream', () => {
  it('passes matching content through whole', async () => {
    expect(await collect(['ab', 'cd', 'e'], sha256Digest('abcde'))).toEqual({
      received: 'abcde',
      error: undefined,
    });
  });

  it('withholds the last chunk and fails when the digest does not match', async () => {
    const { received, error } = await collect(['ab', 'cd', 'X'], sha256Digest('abcde'));
    expect(received).toBe('abcd');
    expect(error).toBeInstanceOf(DigestMismatchError);
  });
});
