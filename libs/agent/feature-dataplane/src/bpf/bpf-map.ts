import { LibbpfCallError, BPF_ANY, libbpf } from './libbpf';

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
