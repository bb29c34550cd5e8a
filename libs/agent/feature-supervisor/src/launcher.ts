import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { requestSlice } from './scheduling';
import type { ServiceSpec } from './supervisor';

/** How the supervisor starts a process (injected so tests can use any script). */
export type Launcher = (spec: ServiceSpec) => ChildProcess;

/*
 * Memory settings of the service processes. Each was measured alone, idle, on the local provider
 * (staticpod, identity and registry forked as the supervisor forks them; RSS per process; the
 * noise between runs is about ±2 MiB):
 * - `--max-semi-space-size=1` with `--optimize-for-size`: the processes are idle most of the
 *   time, and a 16 MiB nursery each is resident memory spent on nothing; V8's size-over-speed
 *   heuristics besides (−7.7 MiB each, both together).
 * - `MALLOC_ARENA_MAX=2`: glibc gives every thread that allocates (V8's compiler and GC
 *   workers, libuv's pool) an arena of its own whose freed pages stay resident (−1.6 MiB each).
 * - lean only, `--lite-mode`: no optimizing compiler, so neither its code in the node binary
 *   (file-backed, yet counted in each process's RSS) nor its zones are touched (staticpod 67.3 →
 *   61.2 MiB, identity 73.6 → 68.3). It disables WebAssembly too, and with it the global fetch()
 *   (undici parses HTTP with wasm): a lean service must not use fetch. long.js's optional wasm
 *   falls back to JavaScript. `--no-expose-wasm` says so explicitly: lite mode alone makes
 *   Node print "disabling flag --expose_wasm due to conflicting flags" on every start.
 * - lean only, `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` at 64 KiB: starting leaves
 *   freed chunks behind that glibc would otherwise keep (−2.3 MiB each on top of lite mode). Not
 *   for a data path: every 64 KiB stream chunk would cost an mmap and a munmap.
 * - every process, supervisor included, gives back the clean file pages it touched while starting
 *   (libs/agent/data-access-memory): about 38 MiB of each process's RSS is the node binary's
 *   pages, and 11–19 MiB of them remain resident once idle (seven processes: 433.9 → 271.2 MiB
 *   in total; PSS 170 → 171 MiB, as those pages were shared all along).
 * Measured and not kept: `--jitless` (lite mode's saving, without anything more), `--no-opt`
 * (two thirds of it), `--max-lazy`, `--single-threaded-gc`, `--single-threaded`,
 * `--v8-pool-size=0`, `--max-old-space-size=128`, `UV_THREADPOOL_SIZE=1` and a forced GC after
 * start (each within the noise).
 * Tried for the `fast` profile and not kept: without `--optimize-for-size` the registry's S3
 * pull ran 486–516 MiB/s instead of 289–337 (bench/registry-pull.mjs, 128 MiB from the
 * emulator), but under 200 stalled clients it grew +91 to +100 MiB against a 64 MiB budget
 * (agent-registry-memory.integration-spec.ts; +27 MiB with the flag). The gain is V8's heap
 * growing faster (fewer collections), not its compiler: `--heap-growing-percent=20` alone kept
 * +28 MiB and 342–352 MiB/s, 50 gave +36 MiB and 334, 100 gave +48 MiB and 354.
 * - fast only, `--single-threaded-gc`: with a 1 MiB nursery a blob pull scavenges every few
 *   MiB, and each scavenge woke V8's four helper threads, which spent more CPU than they saved.
 *   A 256 MiB pull from the S3 emulator took 1,068 ms of CPU (helpers ~100 ms each, the main
 *   thread 506) and 971–1,105 ms over three runs; with the flag 503–663 ms, and 298–377 →
 *   400–512 MiB/s (means of 6 pulls, interleaved). `--no-memory-reducer` cut full collections
 *   from 87 to 26 per 6 pulls but neither CPU nor throughput moved.
 */

/** V8 settings every service process starts with (see the measurements above). */
export const SERVICE_EXEC_ARGV: readonly string[] = [
  '--max-semi-space-size=1',
  '--optimize-for-size',
];

/** V8 settings a `fast` service adds. */
export const FAST_EXEC_ARGV: readonly string[] = ['--single-threaded-gc'];

/** V8 settings a `lean` service adds. */
export const LEAN_EXEC_ARGV: readonly string[] = ['--lite-mode', '--no-expose-wasm'];

/** Environment every service process gets on top of the supervisor's. */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** Environment a `lean` service adds. */
export const LEAN_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '65536',
  MALLOC_TRIM_THRESHOLD_: '65536',
};

/** The Node options a service process starts with, by its memory profile. */
export function serviceExecArgv(spec: Pick<ServiceSpec, 'memory'>): string[] {
  return [...SERVICE_EXEC_ARGV, ...(spec.memory === 'lean' ? LEAN_EXEC_ARGV : FAST_EXEC_ARGV)];
}

/** The environment a service process starts with: `base`, the spec's own, then its profile's. */
export function serviceEnv(
  spec: Pick<ServiceSpec, 'memory' | 'env'>,
  base: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string | undefined> {
  return { ...base, ...spec.env, ...SERVICE_ENV, ...(spec.memory === 'lean' ? LEAN_ENV : {}) };
}

/**
 * The `nice` program, which starts a process at a niceness from its first instruction. Renicing
 * a child once it runs reaches only its main thread: V8's compiler and GC helper threads it
 * created before keep the old niceness (Linux sets niceness per thread).
 */
const NICE_PROGRAM = ['/usr/bin/nice', '/bin/nice'].find((file) => fs.existsSync(file));

/** How many threads of a child forkLauncher started took its `sliceNs`, at the latest ask. */
const slicedThreads = new WeakMap<ChildProcess, number>();

/**
 * The number of threads of `child` that took its service's `sliceNs` when it was last asked
 * (at its start, and again at its first message); undefined when none was asked for or another
 * launcher started it. A kernel before 6.12 takes the call and ignores the slice.
 */
export function slicedThreadsOf(child: ChildProcess): number | undefined {
  return slicedThreads.get(child);
}

/** Forks a Node script with an IPC channel, piped stdout/stderr and its profile's settings. */
export const forkLauncher: Launcher = (spec) => {
  const execArgv = serviceExecArgv(spec);
  const niced = spec.nice !== undefined && spec.nice !== 0 && NICE_PROGRAM !== undefined;
  const child = fork(spec.script, [...spec.args], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    ...(niced
      ? {
          execPath: NICE_PROGRAM,
          execArgv: ['-n', String(spec.nice), process.execPath, ...execArgv],
        }
      : { execArgv }),
    env: serviceEnv(spec),
  });
  if (spec.sliceNs !== undefined) {
    // Once at the start (threads created later inherit it) and again at the first message,
    // for the threads Node started in between.
    const ask = () => {
      if (child.pid !== undefined)
        slicedThreads.set(child, requestSlice(child.pid, spec.sliceNs as number));
    };
    child.once('spawn', ask);
    child.once('message', ask);
  }
  if (spec.nice && !niced && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, spec.nice);
    } catch {
      // Lowering a child's priority is always allowed; a failure means it already exited.
    }
  }
  return child;
};
