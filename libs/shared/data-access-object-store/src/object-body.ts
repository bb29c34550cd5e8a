import type { Readable } from 'node:stream';
import type { ObjectBody } from './object-store.port';

/** An {@link ObjectBody} over a stream (an S3 response body): chunks are copied into `into`. */
export function readableBody(stream: Readable): ObjectBody {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let leftover: Buffer | undefined;
  let done = false;
  return {
    async read(into: Uint8Array): Promise<number> {
      let filled = 0;
      while (filled < into.length && !done) {
        let chunk = leftover;
        leftover = undefined;
        if (chunk === undefined) {
          const next = await chunks.next();
          if (next.done === true) {
            done = true;
            break;
          }
          chunk = next.value;
        }
        const take = Math.min(chunk.length, into.length - filled);
        into.set(chunk.subarray(0, take), filled);
        filled += take;
        if (take < chunk.length) leftover = chunk.subarray(take);
      }
      return filled;
    },
    async close(): Promise<void> {
      done = true;
      stream.destroy();
      await Promise.resolve();
    },
  };
}
