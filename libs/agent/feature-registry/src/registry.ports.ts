/** Injection token of the {@link RegistryStore} port. */
export const REGISTRY_STORE = Symbol('REGISTRY_STORE');

/** A requested byte range: `start-end` (end inclusive, optional) or the last `suffix` bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

/**
 * An opened object's bytes, read in order into buffers the caller owns, so that streaming a
 * blob reuses a few buffers instead of allocating one per chunk.
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
  /** The object's entity tag. */
  etag: string;
}

/** The requested range lies outside an object of `size` bytes. */
export interface UnsatisfiableRange {
  kind: 'unsatisfiable';
  /** Total size of the object in bytes, when known. */
  size: number | undefined;
}

/**
 * What the registry needs from the bucket: one bounded whole-object read, one streaming read,
 * one metadata read. Errors are PodminErrors: OBJECT_NOT_FOUND for a missing key,
 * OBJECT_TOO_LARGE over the bound, ACCESS_DENIED or BUCKET_UNAVAILABLE otherwise.
 */
export interface RegistryStore {
  /** Reads a whole object of at most `maxBytes` bytes. */
  readBounded(key: string, maxBytes: number): Promise<Buffer>;
  /** Opens an object (or a range of it) for streaming without buffering it. */
  openRead(key: string, range?: ByteRange): Promise<OpenedObject | UnsatisfiableRange>;
  /** Size and entity tag of an object. */
  stat(key: string): Promise<{ size: number; etag: string }>;
}

/** Injection token of the registry's {@link StructuredLogger}. */
export const REGISTRY_LOGGER = Symbol('REGISTRY_LOGGER');

/** Log levels of a structured log line. */
export type { LogLevel, StructuredLogger } from '@podmin/agent-util-logging';
