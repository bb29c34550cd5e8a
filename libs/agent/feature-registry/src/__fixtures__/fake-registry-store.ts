import { Readable } from 'node:stream';
import {
  DEFAULT_MAX_READ_BYTES,
  md5Etag,
  readableBody,
  resolveRange,
} from '@podmin/data-access-object-store';
import type {
  GetOptions,
  ObjectHead,
  OpenReadOptions,
  OpenReadResult,
  StoredObject,
} from '@podmin/data-access-object-store';
import { PodminError } from '@podmin/util-errors';
import type { RegistryStore } from '../registry.ports';

/** In-memory fake of the registry's bucket port that records object reads by kind. */
export class FakeRegistryStore implements RegistryStore {
  /** Objects by key; tests may replace bytes to simulate tampering. */
  readonly objects = new Map<string, Buffer>();
  /** Every read, in order, as `<kind> <key>`: `readBounded` (get), `openRead`, `stat` (head). */
  readonly reads: string[] = [];

  /** Stores every `[key, bytes]` pair. */
  putAll(objects: Iterable<[string, Buffer]>): void {
    for (const [key, bytes] of objects) this.objects.set(key, bytes);
  }

  /** Reads a whole object, enforcing the bound like the real adapters. */
  get(key: string, options: GetOptions = {}): Promise<StoredObject> {
    return attempt(() => {
      this.reads.push(`readBounded ${key}`);
      const bytes = this.bytes(key);
      if (bytes.length > (options.maxBytes ?? DEFAULT_MAX_READ_BYTES)) {
        throw new PodminError('OBJECT_TOO_LARGE', `reading ${key}: too large`);
      }
      return { body: bytes, etag: md5Etag(bytes) };
    });
  }

  /** Streams an object or one range of it in small chunks. */
  openRead(key: string, options: OpenReadOptions = {}): Promise<OpenReadResult> {
    return attempt((): OpenReadResult => {
      this.reads.push(`openRead ${key}`);
      const bytes = this.bytes(key);
      const { range } = options;
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
        etag: md5Etag(bytes),
      };
    });
  }

  /** Size and ETag of an object. */
  head(key: string): Promise<ObjectHead> {
    return attempt(() => {
      this.reads.push(`stat ${key}`);
      const bytes = this.bytes(key);
      return { size: bytes.length, etag: md5Etag(bytes), lastModified: new Date(0) };
    });
  }

  private bytes(key: string): Buffer {
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
