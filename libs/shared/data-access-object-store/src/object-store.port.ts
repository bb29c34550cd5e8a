import { PodminError } from '@podmin/util-errors';

/** An object read from the store with its entity tag. */
export interface StoredObject {
  body: Buffer;
  /** Opaque entity tag, quoted as S3 returns it (e.g. `"0cc175b9..."`). */
  etag: string;
}

/** Metadata of one object. */
export interface ObjectHead {
  etag: string;
  size: number;
  lastModified: Date;
}

/** One entry of a listing. */
export interface ListedObject {
  key: string;
  size: number;
  etag: string;
  lastModified: Date;
}

/** One page of a listing; pass `nextToken` back to continue. */
export interface ListPage {
  objects: ListedObject[];
  nextToken?: string;
}

/** Options of a bounded read. */
export interface GetOptions {
  /** Reject with OBJECT_TOO_LARGE when the object exceeds this many bytes (default 16 MiB). */
  maxBytes?: number;
  /** Cancels the read; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Result of a conditional read: unchanged when the current ETag equals the one given. */
export type ConditionalGetResult =
  { status: 'unchanged'; etag: string } | ({ status: 'changed' } & StoredObject);

/** A requested byte range: `start-end` (end inclusive, optional) or the last `suffix` bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

/** Options of a streaming read. */
export interface OpenReadOptions {
  /** Serve only these bytes; the whole object when omitted. */
  range?: ByteRange;
}

/**
 * An opened object's bytes, read in order into buffers the caller owns, so that streaming a
 * large object reuses a few buffers instead of allocating one per chunk.
 */
export interface ObjectBody {
  /** Fills `into` with the next bytes (fewer only at the end); resolves to the count, 0 at the end. */
  read(into: Uint8Array): Promise<number>;
  /** Releases the object (file handle or response); safe to call more than once. */
  close(): Promise<void>;
}

/** An object opened for streaming, with the byte range actually served. */
export interface OpenedObject {
  kind: 'opened';
  /** The object's (or range's) bytes; the consumer must close it. */
  body: ObjectBody;
  /** Total size of the object in bytes. */
  size: number;
  /** First byte served. */
  start: number;
  /** Last byte served (inclusive); `start - 1` for an empty object. */
  end: number;
  /** The whole object's entity tag, the same one `get` and `head` report. */
  etag: string;
}

/** The requested range lies outside an object of `size` bytes; nothing was opened. */
export interface UnsatisfiableRange {
  kind: 'unsatisfiable';
  /** Total size of the object in bytes. */
  size: number;
}

/** Result of a streaming read: the opened object, or a range it cannot satisfy. */
export type OpenReadResult = OpenedObject | UnsatisfiableRange;

/**
 * One reading of the store's clock beside this process's: what the server's clock said and what
 * ours said at that moment. The difference is this node's clock skew.
 */
export interface ServerTimeSample {
  /** The server's time, epoch milliseconds (S3's `Date` header: whole seconds; a file's mtime). */
  serverMs: number;
  /** This process's wall-clock time when the server took its time, epoch milliseconds. */
  localMs: number;
}

/**
 * The object-storage port every podmin component uses. Errors are PodminErrors:
 * OBJECT_NOT_FOUND for a missing key, PRECONDITION_FAILED for a failed create-only or
 * if-match write, CONFLICT when a concurrent conditional write to the key was in flight (S3's
 * 409: retry; says nothing about whether the key exists), OBJECT_TOO_LARGE for a read over its
 * bound, BUCKET_UNAVAILABLE or ACCESS_DENIED when the store cannot be reached or used.
 */
export interface ObjectStore {
  /** Reads a whole object (bounded) with its ETag; OBJECT_NOT_FOUND when absent. */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Reads an object unless its ETag still equals `etag`; OBJECT_NOT_FOUND when absent. */
  getIfChanged(key: string, etag: string, options?: GetOptions): Promise<ConditionalGetResult>;
  /** Creates an object only if the key is absent; PRECONDITION_FAILED when it exists. Returns the new ETag. */
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  /** Replaces an object only if its current ETag equals `etag`; PRECONDITION_FAILED otherwise (also when absent). */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
  /** Writes an object unconditionally. Returns the new ETag. */
  put(key: string, body: Buffer | string): Promise<string>;
  /**
   * Opens an object (or one range of it) for streaming without buffering it; OBJECT_NOT_FOUND
   * when absent, INVALID_ARGUMENT for a malformed range, `unsatisfiable` for one outside it.
   */
  openRead(key: string, options?: OpenReadOptions): Promise<OpenReadResult>;
  /** Metadata of an object; OBJECT_NOT_FOUND when absent. */
  head(key: string): Promise<ObjectHead>;
  /** Deletes an object; deleting an absent key succeeds. */
  delete(key: string): Promise<void>;
  /** One page (at most 1000 entries) of keys under `prefix`, in lexicographic key order. */
  list(prefix: string, token?: string): Promise<ListPage>;
  /**
   * The server's clock as last seen in a response the store got anyway (no request of its own),
   * or undefined before one; optional: a store without a clock of its own leaves it out.
   */
  lastServerTime?(): ServerTimeSample | undefined;
}

/** Default bound of a whole-object read. */
export const DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024;

/** Object keys are relative, slash-separated, without empty, `.` or `..` segments. */
export function assertValidKey(key: string): void {
  if (
    key.length === 0 ||
    key.length > 1024 ||
    key.startsWith('/') ||
    key.endsWith('/') ||
    key.includes('\\') ||
    key.includes('\0') ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new InvalidKeyError(key);
  }
}

/** Raised for a key that is not a relative slash-separated path. */
export class InvalidKeyError extends PodminError {
  constructor(key: string) {
    super(
      'INVALID_ARGUMENT',
      `object key ${JSON.stringify(key)}: must be a relative slash-separated path without empty, "." or ".." segments`,
    );
  }
}
