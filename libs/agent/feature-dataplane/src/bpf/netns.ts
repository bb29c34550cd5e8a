import fs from 'node:fs';
import koffi from 'koffi';
import { DataplaneError } from '../dataplane-error';

// setns(2) through FFI for the calling thread only: BPF_PROG_TEST_RUN answers bpf_fib_lookup
// from the caller's network namespace, so a test or bench can run the program against a FIB
// it made without moving the whole process (or its other threads) there.

const CLONE_NEWNET = 0x40000000;
let setns: ((fd: number, nstype: number) => number) | undefined;

function bind(): (fd: number, nstype: number) => number {
  if (setns) return setns;
  const libc = koffi.load('libc.so.6');
  setns = libc.func('int setns(int fd, int nstype)') as (fd: number, nstype: number) => number;
  return setns;
}

/**
 * Runs `fn` (synchronous) with this thread in the named network namespace (`ip netns add`),
 * then moves it back, also when `fn` throws. Needs CAP_SYS_ADMIN.
 */
export function inNetworkNamespace<T>(name: string, fn: () => T): T {
  const enter = bind();
  const own = fs.openSync('/proc/thread-self/ns/net', 'r');
  let target: number | undefined;
  try {
    target = fs.openSync(`/run/netns/${name}`, 'r');
    if (enter(target, CLONE_NEWNET) !== 0)
      throw new DataplaneError(
        'INTERNAL',
        `setns into network namespace ${name} failed (errno ${koffi.errno()})`,
      );
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: fn() };
    } catch (error) {
      outcome = { error };
    }
    // Back before anything else: a thread left in the namespace would open sockets there.
    if (enter(own, CLONE_NEWNET) !== 0)
      throw new DataplaneError(
        'INTERNAL',
        `setns back from network namespace ${name} failed (errno ${koffi.errno()})`,
      );
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  } finally {
    if (target !== undefined) fs.closeSync(target);
    fs.closeSync(own);
  }
}
