import { createHash } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';

// The ObjectStore port's shapes, restated so this library does not depend on the adapters'
// library (whose own specs use this one); TypeScript's structural typing keeps them in step.
interface StoredObject {
  body: Buffer;
  etag: string;
}
interface ObjectHead {
  etag: string;
  size: number;
  lastModified: Date;
}
interface ListPage {
  objects: Array<{ key: string; size: number; etag: string; lastModified: Date }>;
  nextToken?: string;
}
interface GetOptions {
  maxBytes?: number;
}
type ConditionalGetResult =
  { status: 'unchanged'; etag: string } | ({ status: 'changed' } & StoredObject);
type ByteRange = { start: number; end?: number } | { suffix: number };
interface ObjectBody {
  read(into: Uint8Array): Promise<number>;
  close(): Promise<void>;
}
type OpenReadResult =
  | { kind: 'opened'; body: ObjectBody; size: number; start: number; end: number; etag: string }
  | { kind: 'unsatisfiable'; size: number };

interface Entry {
  body: Buffer;
  etag: string;
  lastModified: Date;
}

/** A hand-written in-memory ObjectStore fake that counts calls and can inject write conflicts. */
export class InMemoryObjectStore {
  readonly objects = new Map<string, Entry>();
  /** Every call, as `method key`. */
  readonly calls: string[] = [];
  /** Runs before each conditional write; lets a test change the store in between (a racing writer). */
  beforeConditionalWrite: ((key: string) => void) | undefined;

  get(key: string, options?: GetOptions): Promise<StoredObject> {
    this.calls.push(`get ${key}`);
    const entry = this.require(key);
    if (options?.maxBytes !== undefined && entry.body.length > options.maxBytes) {
      return Promise.reject(
        new PodminError('OBJECT_TOO_LARGE', `reading ${key}: over ${options.maxBytes} bytes`),
      );
    }
    return Promise.resolve({ body: Buffer.from(entry.body), etag: entry.etag });
  }

  getIfChanged(key: string, etag: string): Promise<ConditionalGetResult> {
    this.calls.push(`getIfChanged ${key}`);
    const entry = this.require(key);
    return Promise.resolve(
      entry.etag === etag
        ? { status: 'unchanged', etag }
        : { status: 'changed', body: Buffer.from(entry.body), etag: entry.etag },
    );
  }

  putIfAbsent(key: string, body: Buffer | string): Promise<string> {
    this.calls.push(`putIfAbsent ${key}`);
    this.beforeConditionalWrite?.(key);
    if (this.objects.has(key))
      return Promise.reject(new PodminError('PRECONDITION_FAILED', `creating ${key}: exists`));
    return Promise.resolve(this.store(key, body));
  }

  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string> {
    this.calls.push(`putIfMatch ${key}`);
    this.beforeConditionalWrite?.(key);
    if (this.objects.get(key)?.etag !== etag) {
      return Promise.reject(
        new PodminError('PRECONDITION_FAILED', `replacing ${key}: ETag changed`),
      );
    }
    return Promise.resolve(this.store(key, body));
  }

  put(key: string, body: Buffer | string): Promise<string> {
    this.calls.push(`put ${key}`);
    return Promise.resolve(this.store(key, body));
  }

  head(key: string): Promise<ObjectHead> {
    this.calls.push(`head ${key}`);
    const entry = this.require(key);
    return Promise.resolve({
      etag: entry.etag,
      size: entry.body.length,
      lastModified: entry.lastModified,
    });
  }

  openRead(key: string, options: { range?: ByteRange } = {}): Promise<OpenReadResult> {
    this.calls.push(`openRead ${key}`);
    const entry = this.require(key);
    const size = entry.body.length;
    const { range } = options;
    let start = 0;
    let end = size - 1;
    if (range !== undefined && 'suffix' in range) {
      start = Math.max(0, size - range.suffix);
      if (range.suffix === 0 || size === 0) return Promise.resolve({ kind: 'unsatisfiable', size });
    } else if (range !== undefined) {
      if (range.start >= size) return Promise.resolve({ kind: 'unsatisfiable', size });
      start = range.start;
      end = Math.min(range.end ?? end, end);
    }
    let position = start;
    const body: ObjectBody = {
      read: (into) => {
        const n = Math.min(into.length, end + 1 - position);
        into.set(entry.body.subarray(position, position + n));
        position += n;
        return Promise.resolve(n);
      },
      close: () => Promise.resolve(),
    };
    return Promise.resolve({ kind: 'opened', body, size, start, end, etag: entry.etag });
  }

  delete(key: string): Promise<void> {
    this.calls.push(`delete ${key}`);
    this.objects.delete(key);
    return Promise.resolve();
  }

  list(prefix: string): Promise<ListPage> {
    this.calls.push(`list ${prefix}`);
    const objects = [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, e]) => ({
        key,
        size: e.body.length,
        etag: e.etag,
        lastModified: e.lastModified,
      }));
    return Promise.resolve({ objects });
  }

  /** Writes an object directly, bypassing call counting. */
  store(key: string, body: Buffer | string): string {
    const bytes = Buffer.from(body);
    const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
    this.objects.set(key, { body: bytes, etag, lastModified: new Date(0) });
    return etag;
  }

  private require(key: string): Entry {
    const entry = this.objects.get(key);
    if (!entry) throw new PodminError('OBJECT_NOT_FOUND', `reading ${key}: no such object`);
    return entry;
  }
}
