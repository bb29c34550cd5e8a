import { Readable } from 'node:stream';
import { PodminError } from '@podmin/util-errors';
import { readableBody } from '../object-body';
import { resolveRange } from '../range';
import type { ByteRange, OpenedObject, RegistryStore, UnsatisfiableRange } from '../registry.ports';

/** In-memory fake of the registry's bucket port that counts object reads per kind. */
export class FakeRegistryStore implements RegistryStore {
  /** Objects by key; tests may replace bytes to simulate tampering. */
  readonly objects = new Map<string, Buffer>();
  /** Every read, in order, as `<method> <key>`. */
  readonly reads: string[] = [];

  /** Stores every `[key, bytes]` pair. */
  putAll(objects: Iterable<[string, Buffer]>): void {
    for (const [key, bytes] of objects) this.objects.set(key, bytes);
  }

  /** Reads a whole object, enforcing the bound like the real adapters. */
  readBounded(key: string, maxBytes: number): Promise<Buffer> {
    return attempt(() => {
      this.reads.push(`readBounded ${key}`);
      const bytes = this.get(key);
      if (bytes.length > maxBytes) {
        throw new PodminError('OBJECT_TOO_LARGE', `reading ${key}: too large`);
      }
      return bytes;
    });
  }

  /** Streams an object or one range of it in small chunks. */
  openRead(key: string, range?: ByteRange): Promise<OpenedObject | UnsatisfiableRange> {
    return attempt((): OpenedObject | UnsatisfiableRange => {
      this.reads.push(`openRead ${key}`);
      const bytes = this.get(key);
      const resolved =
        range === undefined
          ? { start: 0, end: bytes.length - 1 }
          : resolveRange(range, bytes.length);
      if (resolved === undefined) {
        return { kind: 'unsatisfiable', size: bytes.length };
      }
      const slice = bytes.subarray(resolved.start, resolved.end + 1);
      const chunks: Buffer[] = [];
      for (let i = 0; i < slice.length; i += 7) chunks.push(slice.subarray(i, i + 7));
      return {
        kind: 'opened',
        body: readableBody(Readable.from(chunks)),
        size: bytes.length,
        ...resolved,
        etag: '"fake"',
      };
    });
  }

  /** Size of an object. */
  stat(key: string): Promise<{ size: number; etag: string }> {
    return attempt(() => {
      this.reads.push(`stat ${key}`);
      return { size: this.get(key).length, etag: '"fake"' };
    });
  }

  private get(key: string): Buffer {
    const bytes = this.objects.get(key);
    if (bytes === undefined) {
      throw new PodminError('OBJECT_NOT_FOUND', `reading ${key}: no such object`);
    }
    return bytes;
  }
}

/** Runs `fn` and settles with its result, turning a synchronous throw into a rejection. */
function attempt<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}
