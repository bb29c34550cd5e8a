import { RegistryError } from './registry-error';

/** Buffers per transfer: one being read, one held back, the rest being written or hashed. */
export const SLOTS = 4;
/** Slot size of a fast transfer: large reads and writes keep per-chunk costs small. */
export const LARGE_SLOT_BYTES = 1024 * 1024;
/** Slot size once every fast set is taken: a transfer that stalls then pins only 64 KiB. */
export const SMALL_SLOT_BYTES = 16 * 1024;

/** The bounds of blob transfers; every number is a memory bound, see {@link DEFAULT_TRANSFER_LIMITS}. */
export interface TransferLimits {
  /** Transfers sent through 4 MiB buffer sets at once; the rest get 64 KiB sets. */
  largeSets: number;
  /** Transfers in flight at once; one more is refused with 503 and Retry-After. */
  maxTransfers: number;
  /** A write that stays unfinished this long means the client stopped reading: cut it. */
  stallMs: number;
}

/**
 * 2 fast transfers (8 MiB) plus up to 510 more at 64 KiB each (32 MiB): at most 40 MiB of
 * transfer buffers, whatever local clients do, inside the 64 MiB budget over idle (measured with
 * 200 stalled clients and a pull: apps/agent agent-registry-memory spec). A client that stops
 * reading (no write completes for 5 s; loopback clients never pause that long) is cut; a real pull admitted
 * with small buffers meanwhile moves onto a fast set as soon as one is free, so the fast sets come back for real pulls.
 */
export const DEFAULT_TRANSFER_LIMITS: TransferLimits = {
  largeSets: 2,
  maxTransfers: 512,
  stallMs: 5_000,
};

/** The buffers of one admitted transfer; `release` must be called exactly once when it ends. */
export interface TransferLease {
  /** Shared memory of `SLOTS` slots of `slotBytes` each (the hashing thread reads it too). */
  readonly memory: SharedArrayBuffer;
  readonly slotBytes: number;
  /**
   * Moves a small-buffer transfer onto a fast set when one is free (true: `memory` and
   * `slotBytes` changed). The old set is dropped, never reused, as writes may still read it.
   */
  upgrade(): boolean;
  /** Gives the slot back; `reusable` only when nothing can still be writing or hashing it. */
  release(reusable: boolean): void;
}

function newSet(large: boolean): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOTS * (large ? LARGE_SLOT_BYTES : SMALL_SLOT_BYTES));
}

/** Seconds a refused client is told to wait before it retries. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * Admission and buffers of blob transfers: a bounded number in flight, a few of them with fast
 * 4 MiB buffer sets and the rest with small ones, so memory has a fixed ceiling no matter how
 * many local clients connect and stop reading.
 */
export class TransferBudget {
  private active = 0;
  private largeInUse = 0;
  private readonly spareLarge: SharedArrayBuffer[] = [];
  private readonly spareSmall: SharedArrayBuffer[] = [];

  constructor(readonly limits: TransferLimits = DEFAULT_TRANSFER_LIMITS) {}

  /** Transfers in flight now (tests, status). */
  get inFlight(): number {
    return this.active;
  }

  /** Admits a transfer or refuses it (`BUSY`, answered 503 with Retry-After) beyond the bound. */
  acquire(): TransferLease {
    if (this.active >= this.limits.maxTransfers) {
      throw new RegistryError(
        'BUSY',
        `the registry is serving ${this.active} blob transfers, its limit; retry in ${RETRY_AFTER_SECONDS} s`,
      );
    }
    this.active++;
    let large = this.largeInUse < this.limits.largeSets;
    if (large) this.largeInUse++;
    let memory = (large ? this.spareLarge : this.spareSmall).pop() ?? newSet(large);
    let released = false;
    const budget = { limits: this.limits, state: this };
    return {
      get memory() {
        return memory;
      },
      get slotBytes() {
        return large ? LARGE_SLOT_BYTES : SMALL_SLOT_BYTES;
      },
      upgrade() {
        if (released || large || budget.state.largeInUse >= budget.limits.largeSets) return false;
        budget.state.largeInUse++;
        large = true;
        memory = budget.state.spareLarge.pop() ?? newSet(true);
        return true;
      },
      release(reusable) {
        if (released) return;
        released = true;
        budget.state.active--;
        if (large) budget.state.largeInUse--;
        // Keep as many sets as could be in use at once without a stall; drop the rest.
        const spare = large ? budget.state.spareLarge : budget.state.spareSmall;
        const keep = large ? budget.limits.largeSets : 16;
        if (reusable && spare.length < keep) spare.push(memory);
      },
    };
  }
}
