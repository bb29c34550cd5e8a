import type { Readable } from 'node:stream';
import type { ObjectBody } from './object-store.port';

/** Bytes queued ahead of a reader at the least, whatever the size of its reads. */
const MIN_QUEUE_BYTES = 64 * 1024;

/**
 * An {@link ObjectBody} over a stream (an S3 response body): chunks are copied into `into`.
 *
 * The stream flows ('data' events) and is paused once the bytes queued reach the size of the
 * last read (at least 64 KiB), so a reader that stops reading holds about one buffer's worth.
 * Not the stream's async iterator: it takes chunks with `read()`, which joins every chunk
 * buffered since into a new Buffer, a second allocation per byte. On a 256 MiB pull from the S3
 * emulator that doubled the registry's full garbage collections (each one walks its whole heap).
 */
export function readableBody(stream: Readable): ObjectBody {
  const queue: Buffer[] = [];
  let queued = 0;
  let limit = MIN_QUEUE_BYTES;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    queue.push(bytes);
    queued += bytes.length;
    if (queued >= limit) stream.pause();
    notify();
  };
  const onEnd = (): void => {
    ended = true;
    notify();
  };
  const onError = (err: Error): void => {
    failure ??= err;
    notify();
  };
  // Closed without 'end' or 'error': the body was cut short.
  const onClose = (): void => {
    if (!ended) failure ??= prematureClose();
    notify();
  };
  stream.on('data', onData);
  stream.once('end', onEnd);
  stream.on('error', onError);
  stream.once('close', onClose);
  const detach = (): void => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('close', onClose);
    // The 'error' listener stays: an error after close must not become an uncaught exception.
  };

  return {
    async read(into: Uint8Array): Promise<number> {
      limit = Math.max(MIN_QUEUE_BYTES, into.length);
      let filled = 0;
      for (;;) {
        while (filled < into.length && queue.length > 0) {
          const chunk = queue[0] as Buffer;
          const take = Math.min(chunk.length, into.length - filled);
          into.set(take === chunk.length ? chunk : chunk.subarray(0, take), filled);
          filled += take;
          queued -= take;
          if (take < chunk.length) queue[0] = chunk.subarray(take);
          else queue.shift();
        }
        if (filled === into.length || (ended && queue.length === 0)) break;
        if (failure !== undefined) throw failure;
        if (stream.isPaused()) stream.resume();
        await new Promise<void>((resolve) => (wake = resolve));
      }
      if (queued < limit && stream.isPaused() && !ended) stream.resume();
      return filled;
    },
    async close(): Promise<void> {
      ended = true;
      queue.length = 0;
      queued = 0;
      detach();
      stream.destroy();
      await Promise.resolve();
    },
  };
}

function prematureClose(): Error {
  return Object.assign(new Error('the stream closed before its end'), {
    code: 'ERR_STREAM_PREMATURE_CLOSE',
  });
}
