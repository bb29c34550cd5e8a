import fs from 'node:fs';
import koffi from 'koffi';
import { DataplaneError } from '../dataplane-error';
import { MAPS, type MapLayout } from '../maps/layout';
import { BpfMap } from './bpf-map';
import {
  BPF_TCX_INGRESS,
  LibbpfCallError,
  TEST_RUN_OPTS_SIZE,
  libbpf,
  type TestRunOpts,
} from './libbpf';
import { openCheckedObject } from './map-contract';

// struct __sk_buff: ifindex at 40; the test run accepts a context up to any of its fields and
// zero-fills the rest.
const SKB_IFINDEX_OFFSET = 40;
const SKB_CTX_SIZE = 44;

/** A TCX link: the program attached to one interface until closed (or the interface goes). */
export interface TcxLink {
  readonly ifindex: number;
  close(): void;
}

/** What one BPF_PROG_TEST_RUN returned. */
export interface TestRunResult {
  /** The program's return value (signed: TCX_NEXT is -1). */
  verdict: number;
  /** Average time of one run in ns, as the kernel measured it around its loop. */
  durationNs: number;
  /** The packet as the last run left it. */
  frame: Buffer;
}

/** How BpfObject.testRun runs the program. */
export interface TestRunOptions {
  /** Runs of the program over the same packet buffer (a rewrite stays for the next run). */
  repeat?: number;
  /** The packet's ingress interface in the caller's network namespace (default: loopback). */
  ifindex?: number;
}

/** The loaded dataplane object: its maps and its one program, attachable to interfaces. */
export class BpfObject {
  private closed = false;

  private constructor(
    private readonly handle: unknown,
    private readonly progFd: number,
  ) {}

  /**
   * Opens `file`, checks its maps against `layouts` (type, key and value sizes, bounds; a
   * mismatch throws naming the map), then relocates and loads it (the kernel verifier runs here).
   */
  static load(
    file: string,
    program: string,
    layouts: readonly MapLayout[] = Object.values(MAPS),
  ): BpfObject {
    const handle = openCheckedObject(file, layouts);
    const lib = libbpf();
    const rc = lib.load(handle);
    if (rc < 0) {
      lib.close(handle);
      throw new LibbpfCallError(`load ${file} (verifier or map creation)`, -rc);
    }
    const prog = lib.findProgram(handle, program);
    if (!prog) {
      lib.close(handle);
      throw new DataplaneError('INTERNAL', `${file} has no program ${program}`);
    }
    return new BpfObject(handle, lib.programFd(prog));
  }

  /**
   * Checks the maps `file` declares against `layouts` without loading it (no privilege
   * needed); throws like `load` on a mismatch.
   */
  static checkMaps(file: string, layouts: readonly MapLayout[] = Object.values(MAPS)): void {
    libbpf().close(openCheckedObject(file, layouts));
  }

  /**
   * Runs the program on `frame` (an Ethernet frame) with BPF_PROG_TEST_RUN, in the calling
   * thread's network namespace (its FIB answers bpf_fib_lookup). Maps are the object's own:
   * what the run writes stays. Nothing is sent; a redirect is only the verdict.
   */
  testRun(frame: Buffer, options: TestRunOptions = {}): TestRunResult {
    const out = Buffer.alloc(frame.length + 512);
    const ctx = Buffer.alloc(SKB_CTX_SIZE);
    if (options.ifindex !== undefined) ctx.writeUInt32LE(options.ifindex, SKB_IFINDEX_OFFSET);
    const opts: TestRunOpts = {
      sz: TEST_RUN_OPTS_SIZE,
      data_in: koffi.address(frame),
      data_out: koffi.address(out),
      data_size_in: frame.length,
      data_size_out: out.length,
      ctx_in: options.ifindex !== undefined ? koffi.address(ctx) : 0n,
      ctx_out: 0n,
      ctx_size_in: options.ifindex !== undefined ? ctx.length : 0,
      ctx_size_out: 0,
      retval: 0,
      repeat: options.repeat ?? 1,
      duration: 0,
      flags: 0,
      cpu: 0,
      batch_size: 0,
    };
    const rc = libbpf().testRun(this.progFd, opts);
    if (rc < 0) throw new LibbpfCallError('BPF_PROG_TEST_RUN', -rc);
    return {
      verdict: opts.retval | 0,
      durationNs: opts.duration,
      frame: out.subarray(0, opts.data_size_out),
    };
  }

  /** The named map, sized as the object declares. */
  map(name: string, keySize: number, valueSize: number): BpfMap {
    const map = libbpf().findMap(this.handle, name);
    if (!map) throw new DataplaneError('INTERNAL', `the eBPF object has no map ${name}`);
    return new BpfMap(name, libbpf().mapFd(map), keySize, valueSize);
  }

  /** Attaches the program at TCX ingress of `ifindex`, after any programs already there. */
  attachIngress(ifindex: number): TcxLink {
    const fd = libbpf().linkCreate(this.progFd, ifindex, BPF_TCX_INGRESS, null);
    if (fd < 0) throw new LibbpfCallError(`attach TCX ingress to ifindex ${ifindex}`, -fd);
    let open = true;
    return {
      ifindex,
      close: () => {
        if (!open) return;
        open = false;
        // An unpinned link detaches when its last descriptor closes.
        fs.closeSync(fd);
      },
    };
  }

  /** Frees the program and maps (links must be closed first to detach). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    libbpf().close(this.handle);
  }
}
