import { Inject, Injectable, Optional } from '@nestjs/common';
import { parseDigest } from '@podmin/util-oci';
import { HashingThread } from './hashing-thread';
import type { ObjectBody } from '@podmin/data-access-object-store';
import { SLOTS, TransferBudget, type TransferLease } from './transfer-budget';

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

/** Raised when the client stopped reading: a write did not finish within the stall bound. */
export class ClientStalledError extends Error {
  constructor(readonly stallMs: number) {
    super(`the client read nothing for ${stallMs} ms`);
    this.name = 'ClientStalledError';
  }
}

/** Raised when the client closed the connection mid-transfer. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGoneError';
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
 * Fails waits when the client hangs up. Not `Promise.race` against one promise that stays
 * pending for the whole transfer: every race leaves a reaction on it, so a 48 MiB pull in 16 KiB
 * chunks kept thousands of them (and what they reference) alive until its end, which took the
 * registry 30 MiB over its memory budget under stalled clients. Each wait here registers and
 * unregisters itself.
 */
export class HangupWatch {
  private readonly waits = new Set<(err: Error) => void>();
  private gone: ClientGoneError | undefined;

  constructor(sink: Pick<BlobSink, 'once'>) {
    sink.once('close', () => {
      const gone = (this.gone = new ClientGoneError());
      for (const fail of [...this.waits]) fail(gone);
    });
  }

  /** Waits still registered (each ends when its work settles or the client hangs up). */
  get waiting(): number {
    return this.waits.size;
  }

  /** Settles as `work` does, or rejects with {@link ClientGoneError} once the client hangs up. */
  unlessGone<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.gone !== undefined) {
        work.catch(() => undefined);
        reject(this.gone);
        return;
      }
      const fail = (err: Error): void => {
        this.waits.delete(fail);
        reject(err);
      };
      this.waits.add(fail);
      work.then(
        (value) => {
          this.waits.delete(fail);
          resolve(value);
        },
        (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }
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
  constructor(
    @Inject(HashingThread) private readonly hashing: HashingThread,
    @Optional()
    @Inject(TransferBudget)
    private readonly budget: TransferBudget = new TransferBudget(),
  ) {}

  /**
   * Admits one transfer (before any response is written, so a refusal can still be a 503):
   * throws the `BUSY` RegistryError beyond the budget's bound.
   */
  admit(): TransferLease {
    return this.budget.acquire();
  }

  /**
   * Sends `body` through the buffers of `lease` (admitted now when not given) and ends `sink`;
   * closes `body` and releases the lease in every case. Rejects (leaving the sink unfinished) on
   * a read failure, a gone client ({@link ClientGoneError}), one that stopped reading
   * ({@link ClientStalledError}), or a {@link DigestMismatchError}.
   */
  async send(
    body: ObjectBody,
    sink: BlobSink,
    expectedDigest: string | undefined,
    lease: TransferLease = this.admit(),
  ): Promise<void> {
    const { stallMs } = this.budget.limits;
    let { memory, slotBytes } = lease;
    let clean = false;
    const digester =
      expectedDigest === undefined
        ? undefined
        : this.hashing.start(parseDigest(expectedDigest).algorithm);
    const watch = new HangupWatch(sink);
    const unlessGone = <T>(work: Promise<T>): Promise<T> => watch.unlessGone(work);
    // A buffer is free again once written and hashed.
    let free: Array<Promise<void>> = Array.from({ length: SLOTS }, () => Promise.resolve());
    // Writes still reading a set this transfer moved off; awaited before the body ends.
    const earlier: Array<Promise<void>> = [];
    // A write that never completes pins this transfer's buffers: bound how long it may.
    const write = (chunk: Buffer): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      return unlessGone(
        new Promise<void>((resolve, reject) => {
          timer = setTimeout(() => reject(new ClientStalledError(stallMs)), stallMs);
          sink.write(chunk, (err) => (err ? reject(err) : resolve()));
        }),
      ).finally(() => clearTimeout(timer));
    };
    let held: { slot: number; chunk: Buffer; hashed: Promise<void> } | undefined;
    try {
      for (let slot = 0; ; slot = (slot + 1) % SLOTS) {
        if (slot === 0 && lease.upgrade()) {
          ({ memory, slotBytes } = lease);
          earlier.push(...free);
          free = Array.from({ length: SLOTS }, () => Promise.resolve());
        }
        await unlessGone(free[slot] ?? Promise.resolve());
        const view = new Uint8Array(memory, slot * slotBytes, slotBytes);
        const length = await body.read(view);
        if (length === 0) break;
        const chunk = Buffer.from(memory, slot * slotBytes, length);
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
        const actual = await unlessGone(digester.digest());
        if (actual !== expectedDigest) throw new DigestMismatchError(expectedDigest, actual);
      }
      if (held !== undefined) await write(held.chunk);
      await unlessGone(Promise.all([...earlier, ...free]));
      await unlessGone(new Promise<void>((resolve) => sink.end(resolve)));
      // Only after a clean finish: nothing can still be writing or hashing these buffers.
      clean = true;
    } catch (err) {
      digester?.abandon();
      throw err;
    } finally {
      lease.release(clean);
      await body.close();
    }
  }
}
