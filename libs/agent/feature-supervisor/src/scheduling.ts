import fs from 'node:fs';
import os from 'node:os';
import type Koffi from 'koffi';

/**
 * The EEVDF slice a latency-critical service asks for (agent-dns): 100 µs instead of the
 * kernel's default (a few ms). With a shorter slice its deadline comes sooner, so the kernel
 * (Linux ≥ 6.12) preempts a background process holding the CPU (the leader's snapshot
 * computation) when a query wakes it, instead of letting that process run out its slice.
 */
export const SHORT_SLICE_NS = 100_000;

/** sched_setattr(2)'s number by architecture (it has no libc wrapper in glibc 2.36). */
const SCHED_SETATTR: Partial<Record<string, number>> = { x64: 314, arm64: 274 };

type SchedSetattr = (nr: number, tid: number, attr: Buffer, flags: number) => number;
let bound: SchedSetattr | null | undefined;

/** libc's syscall() through koffi, bound on first use; null where it cannot be. */
function schedSetattr(): SchedSetattr | null {
  if (bound !== undefined) return bound;
  try {
    // Required here, not imported: a supervisor whose services ask for no slice never loads it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const koffi = require('koffi') as typeof Koffi;
    bound = koffi
      .load('libc.so.6')
      .func('long syscall(long nr, int tid, void *attr, unsigned int flags)') as SchedSetattr;
  } catch {
    bound = null;
  }
  return bound;
}

/** struct sched_attr: SCHED_OTHER at `nice` with `sliceNs` as its sched_runtime. */
function schedAttr(nice: number, sliceNs: number): Buffer {
  const attr = Buffer.alloc(56);
  attr.writeUInt32LE(56, 0); // size
  attr.writeUInt32LE(0, 4); // SCHED_OTHER
  attr.writeInt32LE(nice, 16);
  attr.writeBigUInt64LE(BigInt(sliceNs), 24); // sched_runtime: the slice, for a fair task
  return attr;
}

/**
 * Asks for a `sliceNs` EEVDF slice on every thread of process `pid`, keeping each thread's
 * niceness; threads it creates later inherit it from their creator. Returns how many threads
 * took it: 0 where the architecture or the FFI is missing. A kernel before 6.12 accepts the
 * call and ignores the slice.
 */
export function requestSlice(pid: number, sliceNs: number): number {
  const nr = SCHED_SETATTR[process.arch];
  const call = nr === undefined ? null : schedSetattr();
  if (nr === undefined || call === null) return 0;
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0; // it exited
  }
  let set = 0;
  for (const tid of tids.map(Number)) {
    let nice: number;
    try {
      nice = os.getPriority(tid); // a thread's own niceness (Linux keeps it per thread)
    } catch {
      continue; // the thread ended
    }
    if (call(nr, tid, schedAttr(nice, sliceNs), 0) === 0) set++;
  }
  return set;
}
