import fs from 'node:fs';
import koffi from 'koffi';
import { DataplaneError } from '../dataplane-error';

// libbpf through FFI (DESIGN §6.10): the maintained library loads, relocates and verifies the
// object, creates its maps and makes the TCX links; nothing here issues bpf() itself.
// libbpf >= 1.0 returns negative errno values from int functions and NULL (with errno) from
// constructors; libbpf_get_error turns a NULL back into the errno.

// TCX attach types (enum bpf_attach_type, kernel >= 6.6). Debian 12's libbpf 1.1 predates its
// TCX helpers but passes these through bpf_link_create unchanged.
/** TCX ingress: the program sees the packets an interface receives. */
export const BPF_TCX_INGRESS = 46;
// Map update flags.
/** Create or replace. */
export const BPF_ANY = 0;

/** The libbpf functions podmin calls, as koffi binds them. */
export interface Libbpf {
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
export interface TestRunOpts {
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
/** sizeof(struct bpf_test_run_opts) in libbpf 1.x. */
export const TEST_RUN_OPTS_SIZE = 80;

/**
 * Declares the C types the signatures below name (the opaque libbpf objects, struct
 * bpf_test_run_opts) and returns the struct's type.
 */
function declareTypes(): ReturnType<typeof koffi.struct> {
  // koffi's type names are process-wide, and a test runner may evaluate this module twice.
  const named = <T>(name: string, make: () => T): T => {
    try {
      return make();
    } catch {
      return koffi.resolve(name) as T;
    }
  };
  named('bpf_object', () => koffi.opaque('bpf_object'));
  named('bpf_program', () => koffi.opaque('bpf_program'));
  named('bpf_map', () => koffi.opaque('bpf_map'));
  // struct bpf_test_run_opts (libbpf 1.x bpf.h), its pointers as addresses (koffi.address).
  return named('bpf_test_run_opts', () =>
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
}

let bound: Libbpf | undefined;

/** The libbpf functions podmin uses, bound on first use (a node without Services never loads it). */
export function libbpf(): Libbpf {
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
  const opts = declareTypes();
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
  // libbpf prints to stderr by default, which would interleave with the structured log; its
  // failures are reported through return codes instead.
  bound.setPrint(null);
  return bound;
}

/** libbpf's text for a (negative) errno, with the number. */
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
