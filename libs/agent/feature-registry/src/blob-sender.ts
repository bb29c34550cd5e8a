import { Inject, Injectable } from '@nestjs/common';
import { parseDigest } from '@podmin/util-oci';
import { HashingThread } from './hashing-thread';
import type { ObjectBody } from '@podmin/data-access-object-store';

/** Buffers per transfer: one being read, one held back, the rest being written or hashed. */
const SLOTS = 4;
/** Bytes per buffer: large reads and writes keep per-chunk costs small. */
const SLOT_BYTES = 1024 * 1024;
/** Buffer sets kept for reuse between transfers (more are made, then dropped, under load). */
const KEPT_BUFFER_SETS = 4;

/** Raised at the end of a blob whose bytes do not hash to the expected digest. */
export class DigestMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`stored blob ${expected} hashes to ${actual}`);
    this.name = 'DigestMismatchError';
  }
}

/** Where a blob is written: the HTTP response, or a test sink. */
export interface BlobSink {
  /** Queues bytes; `callback` runs once they are handed to the kernel (or failed). */
  write(chunk: Buffer, callback: (err?: Error | null) => void): boolean;
  /** Finishes the body. */
  end(callback: () => void): void;
  /** True once the connection is gone. */
  readonly destroyed: boolean;
  /** Emits `close` when the connection is gone. */
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Copies an object body to a sink through a few reused shared buffers, so a transfer never
 * allocates per chunk. With an expected digest, each buffer is hashed on the hashing thread
 * while it is written, and the most recent buffer is held back until the end: only when the
 * whole content hashes to the digest is it released, so a client told `Content-Length` never
 * receives the complete (wrong) body.
 */
@Injectable()
export class BlobSender {
  private readonly spare: SharedArrayBuffer[] = [];

  constructor(@Inject(HashingThread) private readonly hashing: HashingThread) {}

  /**
   * Sends `body` and ends `sink`; closes `body` in every case. Rejects (leaving the sink
   * unfinished) on a read failure, a gone client, or a {@link DigestMismatchError}.
   */
  async send(body: ObjectBody, sink: BlobSink, expectedDigest: string | undefined): Promise<void> {
    const memory = this.spare.pop() ?? new SharedArrayBuffer(SLOTS * SLOT_BYTES);
    const digester =
      expectedDigest === undefined
        ? undefined
        : this.hashing.start(parseDigest(expectedDigest).algorithm);
    const gone = new Promise<never>((_, reject) =>
      sink.once('close', () => reject(new Error('the client closed the connection'))),
    );
    gone.catch(() => undefined);
    // A buffer is free again once written and hashed.
    const free: Array<Promise<void>> = Array.from({ length: SLOTS }, () => Promise.resolve());
    const write = (chunk: Buffer): Promise<void> =>
      Promise.race([
        gone,
        new Promise<void>((resolve, reject) =>
          sink.write(chunk, (err) => (err ? reject(err) : resolve())),
        ),
      ]);
    let held: { slot: number; chunk: Buffer; hashed: Promise<void> } | undefined;
    try {
      for (let slot = 0; ; slot = (slot + 1) % SLOTS) {
        await Promise.race([gone, free[slot]]);
        const view = new Uint8Array(memory, slot * SLOT_BYTES, SLOT_BYTES);
        const length = await body.read(view);
        if (length === 0) break;
        const chunk = Buffer.from(memory, slot * SLOT_BYTES, length);
        const hashed = digester?.update(chunk) ?? Promise.resolve();
        if (held !== undefined) {
          const released = Promise.all([write(held.chunk), held.hashed]).then(() => undefined);
          // A failed write surfaces through the next wait on this buffer, or at the end.
          released.catch(() => undefined);
          free[held.slot] = released;
        }
        held = { slot, chunk, hashed };
      }
      if (digester !== undefined && expectedDigest !== undefined) {
        const actual = await Promise.race([gone, digester.digest()]);
        if (actual !== expectedDigest) throw new DigestMismatchError(expectedDigest, actual);
      }
      if (held !== undefined) await write(held.chunk);
      await Promise.race([gone, Promise.all(free)]);
      await Promise.race([gone, new Promise<void>((resolve) => sink.end(resolve))]);
      // Only after a clean finish: nothing can still be writing or hashing these buffers.
      if (this.spare.length < KEPT_BUFFER_SETS) this.spare.push(memory);
    } catch (err) {
      digester?.abandon();
      throw err;
    } finally {
      await body.close();
    }
  }
}
