import { EventEmitter } from 'node:events';
import type { BlobSink } from '../blob-sender';

/** A {@link BlobSink} that copies what it is given (the sender reuses its buffers) and can hang up. */
export class RecordingSink extends EventEmitter implements BlobSink {
  /** Copies of every chunk written, in order. */
  readonly chunks: Buffer[] = [];
  /** True once `end` was called. */
  ended = false;
  destroyed = false;
  /** When true, writes are taken but never complete: a client that stopped reading. */
  stalled = false;

  /** All bytes written so far. */
  get received(): Buffer {
    return Buffer.concat(this.chunks);
  }

  write(chunk: Buffer, callback: (err?: Error | null) => void): boolean {
    if (this.destroyed) {
      setImmediate(() => callback(new Error('write after the connection closed')));
      return false;
    }
    this.chunks.push(Buffer.from(chunk));
    if (!this.stalled) setImmediate(() => callback());
    return true;
  }

  end(callback: () => void): void {
    this.ended = true;
    setImmediate(callback);
  }

  /** Simulates the client closing the connection. */
  hangUp(): void {
    this.destroyed = true;
    this.emit('close');
  }
}
