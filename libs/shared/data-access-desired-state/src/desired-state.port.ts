// The object-store methods desired state needs, declared beside their consumer. They restate
// the ObjectStore port's shapes structurally (every ObjectStore satisfies them) so this library
// does not depend on the adapters' library, whose specs use @podmin/testing, which uses this one.

/** Options of one bounded, cancellable object read. */
export interface ReadOptions {
  /** Reject with OBJECT_TOO_LARGE beyond this many bytes. */
  maxBytes?: number;
  /** Cancels the read; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** An object read with its entity tag. */
export interface StoredObject {
  body: Buffer;
  etag: string;
}

/** Result of a conditional read. */
export type ConditionalGetResult =
  { status: 'unchanged'; etag: string } | ({ status: 'changed' } & StoredObject);

/** Reads committed desired state: the index and immutable payloads. */
export interface DesiredStateReader {
  /** Reads a whole object (bounded); OBJECT_NOT_FOUND when absent. */
  get(key: string, options?: ReadOptions): Promise<StoredObject>;
  /** Reads an object unless its ETag still equals `etag`; OBJECT_NOT_FOUND when absent. */
  getIfChanged(key: string, etag: string, options?: ReadOptions): Promise<ConditionalGetResult>;
}

/** Reads and commits desired state: create-only payloads and the index by compare-and-swap. */
export interface DesiredStateStore extends Pick<DesiredStateReader, 'get'> {
  /** Creates an object only if absent; PRECONDITION_FAILED when it exists. */
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  /** Replaces an object only if its ETag still equals `etag`; PRECONDITION_FAILED otherwise. */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}

/** Options every operation of this library takes. */
export interface SignalOptions {
  /** Cancels the operation: passed to every object read, checked before every write. */
  signal?: AbortSignal;
}
