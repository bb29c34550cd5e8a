import fs from 'node:fs';
import koffi from 'koffi';
import { DataplaneError } from '../dataplane-error';
import { MAPS, type MapLayout } from '../maps/layout';

// libbpf through FFI (DESIGN §6.10): the maintained library loads, relocates and verifies the
// object, creates its maps and makes the TCX links; nothing here issues bpf() itself.
// libbpf >= 1.0 returns negative errno values from int functions and NULL (with errno) from
// constructors; libbpf_get_error turns a NULL back into the errno.

// TCX attach types (enum bpf_attach_type, kernel >= 6.6). Debian 12's libbpf 1.1 predates its
// TCX helpers but passes these through bpf_link_create unchanged.
const BPF_TCX_INGRESS = 46;
// Map update flags.
/** Create or replace. */
export const BPF_ANY = 0;

interface Libbpf {
  openFile(path: string, opts: null): unknown;
  getError(ptr: unknown): number;
  load(obj: unknown): number;
  close(obj: unknown): void;
  findProgram(obj: unknown, name: string): unknown;
  programFd(prog: unknown): number;
  findMap(obj: unknown, name: string): unknown;
  mapFd(map: unknown): number;
  update(fd: number, key: Buffer, value: Buffer, flags: number): number;
  lookup(fd: number, key: Buffer, value: Buffer): number;
  remove(fd: number, key: Buffer): number;
  nextKey(fd: number, key: Buffer | null, next: Buffer): number;
  linkCreate(progFd: number, ifindex: number, attachType: number, opts: null): number;
  nextMap(obj: unknown, prev: unknown): unknown;
  mapName(map: unknown): string;
  mapType(map: unknown): number;
  mapKeySize(map: unknown): number;
  mapValueSize(map: unknown): number;
  mapMaxEntries(map: unknown): number;
  testRun(progFd: number, opts: TestRunOpts): number;
  enableStats(type: number): number;
  setPrint(fn: null): unknown;
  strerror(err: number, buf: Buffer, size: number): number;
}

/** struct bpf_test_run_opts as koffi passes it (pointers as addresses). */
interface TestRunOpts {
  sz: number;
  data_in: bigint;
  data_out: bigint;
  data_size_in: number;
  data_size_out: number;
  ctx_in: bigint;
  ctx_out: bigint;
  ctx_size_in: number;
  ctx_size_out: number;
  retval: number;
  repeat: number;
  duration: number;
  flags: number;
  cpu: number;
  batch_size: number;
}
const TEST_RUN_OPTS_SIZE = 80;
// struct __sk_buff: ifindex at 40; the test run accepts a context up to any of its fields and
// zero-fills the rest.
const SKB_IFINDEX_OFFSET = 40;
const SKB_CTX_SIZE = 44;

let bound: Libbpf | undefined;

/** The libbpf functions podmin uses, bound on first use (a node without Services never loads it). */
function libbpf(): Libbpf {
  if (bound) return bound;
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load('libbpf.so.1');
  } catch (err) {
    throw new DataplaneError(
      'SERVICE_UNAVAILABLE',
      `cannot load libbpf.so.1 (Debian: libbpf1): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  // koffi's type names are process-wide, and a test runner may evaluate this module twice.
  const named = <T>(name: string, make: () => T): T => {
    try {
      return make();
    } catch {
      return koffi.resolve(name) as T;
    }
  };
  const obj = named('bpf_object', () => koffi.opaque('bpf_object'));
  const prog = named('bpf_program', () => koffi.opaque('bpf_program'));
  const map = named('bpf_map', () => koffi.opaque('bpf_map'));
  // struct bpf_test_run_opts (libbpf 1.x bpf.h), its pointers as addresses (koffi.address).
  const opts = named('bpf_test_run_opts', () =>
    koffi.struct('bpf_test_run_opts', {
      sz: 'size_t',
      data_in: 'uint64_t',
      data_out: 'uint64_t',
      data_size_in: 'uint32_t',
      data_size_out: 'uint32_t',
      ctx_in: 'uint64_t',
      ctx_out: 'uint64_t',
      ctx_size_in: 'uint32_t',
      ctx_size_out: 'uint32_t',
      retval: 'uint32_t',
      repeat: 'int',
      duration: 'uint32_t',
      flags: 'uint32_t',
      cpu: 'uint32_t',
      batch_size: 'uint32_t',
    }),
  );
  bound = {
    openFile: lib.func('bpf_object *bpf_object__open_file(const char *path, void *opts)'),
    getError: lib.func('long libbpf_get_error(const void *ptr)'),
    load: lib.func('int bpf_object__load(bpf_object *obj)'),
    close: lib.func('void bpf_object__close(bpf_object *obj)'),
    findProgram: lib.func(
      'bpf_program *bpf_object__find_program_by_name(bpf_object *obj, const char *name)',
    ),
    programFd: lib.func('int bpf_program__fd(bpf_program *prog)'),
    findMap: lib.func('bpf_map *bpf_object__find_map_by_name(bpf_object *obj, const char *name)'),
    mapFd: lib.func('int bpf_map__fd(bpf_map *map)'),
    update: lib.func(
      'int bpf_map_update_elem(int fd, const void *key, const void *value, uint64_t flags)',
    ),
    lookup: lib.func('int bpf_map_lookup_elem(int fd, const void *key, void *value)'),
    remove: lib.func('int bpf_map_delete_elem(int fd, const void *key)'),
    nextKey: lib.func('int bpf_map_get_next_key(int fd, const void *key, void *next)'),
    linkCreate: lib.func(
      'int bpf_link_create(int prog_fd, int target_fd, int attach_type, const void *opts)',
    ),
    nextMap: lib.func('bpf_map *bpf_object__next_map(bpf_object *obj, bpf_map *map)'),
    mapName: lib.func('const char *bpf_map__name(bpf_map *map)'),
    mapType: lib.func('int bpf_map__type(bpf_map *map)'),
    mapKeySize: lib.func('uint32_t bpf_map__key_size(bpf_map *map)'),
    mapValueSize: lib.func('uint32_t bpf_map__value_size(bpf_map *map)'),
    mapMaxEntries: lib.func('uint32_t bpf_map__max_entries(bpf_map *map)'),
    testRun: lib.func('bpf_prog_test_run_opts', 'int', ['int', koffi.inout(koffi.pointer(opts))]),
    enableStats: lib.func('int bpf_enable_stats(int type)'),
    setPrint: lib.func('void *libbpf_set_print(void *fn)'),
    strerror: lib.func('int libbpf_strerror(int err, char *buf, size_t size)'),
  };
  void obj;
  void prog;
  void map;
  // libbpf prints to stderr by default, which would interleave with the structured log; its
  // failures are reported through return codes instead.
  bound.setPrint(null);
  return bound;
}

function describe(err: number): string {
  const buf = Buffer.alloc(256);
  libbpf().strerror(err, buf, buf.length);
  const end = buf.indexOf(0);
  return `${buf.subarray(0, end < 0 ? buf.length : end).toString()} (errno ${Math.abs(err)})`;
}

/** errno of a failed libbpf call, from its negative return value. */
export class LibbpfCallError extends DataplaneError {
  constructor(
    what: string,
    readonly errno: number,
  ) {
    super('INTERNAL', `${what}: ${describe(-errno)}`);
  }
}

/**
 * Turns on the kernel's run-time statistics of every BPF program (run_time_ns and run_cnt, as
 * `bpftool prog show` prints them) until the returned function is called (BPF_ENABLE_STATS: the
 * kernel counts while any such descriptor is open, so no sysctl is left changed). Needs root.
 */
export function enableRunTimeStats(): () => void {
  const BPF_STATS_RUN_TIME = 0;
  const fd = libbpf().enableStats(BPF_STATS_RUN_TIME);
  if (fd < 0) throw new LibbpfCallError('enable BPF run-time statistics', -fd);
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    fs.closeSync(fd);
  };
}

/** One BPF map of the loaded object, by file descriptor. */
export class BpfMap {
  constructor(
    readonly name: string,
    private readonly fd: number,
    /** Key size in bytes. */
    readonly keySize: number,
    /** Value size in bytes. */
    readonly valueSize: number,
  ) {}

  /** Creates or replaces one entry. */
  update(key: Buffer, value: Buffer, flags = BPF_ANY): void {
    const rc = libbpf().update(this.fd, key, value, flags);
    if (rc < 0) throw new LibbpfCallError(`update ${this.name}`, -rc);
  }

  /** Deletes one entry; false when it was not there. */
  delete(key: Buffer): boolean {
    const rc = libbpf().remove(this.fd, key);
    if (rc === -2) return false; // ENOENT
    if (rc < 0) throw new LibbpfCallError(`delete from ${this.name}`, -rc);
    return true;
  }

  /** One entry's value, or undefined. */
  lookup(key: Buffer): Buffer | undefined {
    const value = Buffer.alloc(this.valueSize);
    const rc = libbpf().lookup(this.fd, key, value);
    if (rc === -2) return undefined;
    if (rc < 0) throw new LibbpfCallError(`lookup in ${this.name}`, -rc);
    return value;
  }

  /** Every key now in the map (a snapshot; entries may change meanwhile). */
  keys(): Buffer[] {
    const out: Buffer[] = [];
    let prev: Buffer | null = null;
    for (;;) {
      const next = Buffer.alloc(this.keySize);
      const rc = libbpf().nextKey(this.fd, prev, next);
      if (rc === -2) return out;
      if (rc < 0) throw new LibbpfCallError(`iterate ${this.name}`, -rc);
      out.push(next);
      prev = next;
    }
  }
}

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

function typeName(type: number): string {
  const names: Record<number, string> = { 1: 'hash', 2: 'array', 6: 'percpu_array', 9: 'lru_hash' };
  return names[type] ?? `type ${type}`;
}

/**
 * Compares the maps an opened (not yet loaded) object declares with the layouts user space
 * writes: every layout's map must exist with the same type, key size, value size and bound, and
 * the object must have no map the layouts do not describe. Throws naming the map and both values.
 */
function checkMaps(file: string, handle: unknown, layouts: readonly MapLayout[]): void {
  const lib = libbpf();
  const declared = new Map<string, unknown>();
  for (let m = lib.nextMap(handle, null); m; m = lib.nextMap(handle, m))
    declared.set(lib.mapName(m), m);
  const problems: string[] = [];
  for (const want of layouts) {
    const m = declared.get(want.name);
    declared.delete(want.name);
    if (!m) {
      problems.push(`map ${want.name} is missing from the object`);
      continue;
    }
    const have = {
      type: lib.mapType(m),
      key: lib.mapKeySize(m),
      value: lib.mapValueSize(m),
      maxEntries: lib.mapMaxEntries(m),
    };
    if (have.type !== want.type)
      problems.push(
        `map ${want.name} is a ${typeName(have.type)} map in the object, ${typeName(want.type)} in layout.ts`,
      );
    for (const [field, what] of [
      ['key', 'key size'],
      ['value', 'value size'],
      ['maxEntries', 'max entries'],
    ] as const) {
      if (have[field] !== want[field])
        problems.push(
          `map ${want.name} ${what} is ${have[field]} in the object, ${want[field]} in layout.ts`,
        );
    }
  }
  for (const name of declared.keys())
    problems.push(`map ${name} is in the object but not in layout.ts`);
  if (problems.length > 0)
    throw new DataplaneError(
      'INTERNAL',
      `eBPF object ${file} does not match libs/agent/feature-dataplane/src/maps/layout.ts: ${problems.join('; ')}`,
    );
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
    if (!fs.existsSync(file))
      throw new DataplaneError('NOT_FOUND', `eBPF object ${file} does not exist`);
    const lib = libbpf();
    const handle = lib.openFile(file, null);
    if (!handle) throw new LibbpfCallError(`open ${file}`, -lib.getError(handle));
    try {
      checkMaps(file, handle, layouts);
    } catch (err) {
      lib.close(handle);
      throw err;
    }
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
    if (!fs.existsSync(file))
      throw new DataplaneError('NOT_FOUND', `eBPF object ${file} does not exist`);
    const lib = libbpf();
    const handle = lib.openFile(file, null);
    if (!handle) throw new LibbpfCallError(`open ${file}`, -lib.getError(handle));
    try {
      checkMaps(file, handle, layouts);
    } finally {
      lib.close(handle);
    }
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
