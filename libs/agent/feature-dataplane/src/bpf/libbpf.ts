import fs from 'node:fs';
import koffi from 'koffi';
import { DataplaneError } from '../dataplane-error';

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
  setPrint(fn: null): unknown;
  strerror(err: number, buf: Buffer, size: number): number;
}

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
  const obj = koffi.opaque('bpf_object');
  const prog = koffi.opaque('bpf_program');
  const map = koffi.opaque('bpf_map');
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

/** The loaded dataplane object: its maps and its one program, attachable to interfaces. */
export class BpfObject {
  private closed = false;

  private constructor(
    private readonly handle: unknown,
    private readonly progFd: number,
  ) {}

  /** Opens, relocates and loads `file` (the kernel verifier runs here). */
  static load(file: string, program: string): BpfObject {
    if (!fs.existsSync(file))
      throw new DataplaneError('NOT_FOUND', `eBPF object ${file} does not exist`);
    const lib = libbpf();
    const handle = lib.openFile(file, null);
    if (!handle) throw new LibbpfCallError(`open ${file}`, -lib.getError(handle));
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
