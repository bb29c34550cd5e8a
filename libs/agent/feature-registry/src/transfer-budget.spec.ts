import { RegistryError } from './registry-error';
import { ociResponse } from './oci-error.filter';
import { LARGE_SLOT_BYTES, SLOTS, SMALL_SLOT_BYTES, TransferBudget } from './transfer-budget';

describe('TransferBudget', () => {
  it('hands out a few fast buffer sets, small ones beyond, and refuses past the bound', () => {
    const budget = new TransferBudget({ largeSets: 2, maxTransfers: 4, stallMs: 1000 });
    const leases = [budget.acquire(), budget.acquire(), budget.acquire(), budget.acquire()];
    expect(leases.map((l) => l.slotBytes)).toEqual([
      LARGE_SLOT_BYTES,
      LARGE_SLOT_BYTES,
      SMALL_SLOT_BYTES,
      SMALL_SLOT_BYTES,
    ]);
    expect(leases[2]?.memory.byteLength).toBe(SLOTS * SMALL_SLOT_BYTES);
    let refused: unknown;
    try {
      budget.acquire();
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RegistryError);
    expect(ociResponse(refused as RegistryError)).toEqual({
      status: 503,
      code: 'TOOMANYREQUESTS',
      headers: { 'Retry-After': '1' },
    });
    // A released fast set goes to the next transfer, and is reused when it ended cleanly.
    const first = leases[0]!;
    first.release(true);
    first.release(true);
    expect(budget.inFlight).toBe(3);
    const next = budget.acquire();
    expect(next.slotBytes).toBe(LARGE_SLOT_BYTES);
    expect(next.memory).toBe(first.memory);
    // A set released after a stall may still be referenced by a pending write: never reused.
    next.release(false);
    const fresh = budget.acquire();
    expect(fresh.memory).not.toBe(first.memory);
    // With every fast set taken a small transfer stays small; once one frees, it moves up.
    const small = leases[2]!;
    expect(small.upgrade()).toBe(false);
    fresh.release(true);
    expect(small.upgrade()).toBe(true);
    expect(small.slotBytes).toBe(LARGE_SLOT_BYTES);
    expect(small.memory).toBe(fresh.memory);
    expect(small.upgrade()).toBe(false);
  });
});
