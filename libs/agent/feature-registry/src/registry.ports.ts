import type { ObjectStore } from '@podmin/data-access-object-store';

/** Injection token of the {@link RegistryStore} port. */
export const REGISTRY_STORE = Symbol('REGISTRY_STORE');

/**
 * What the registry needs from the bucket, taken from the shared object-store port: a bounded
 * whole-object read (`get`), a streaming, optionally ranged read into the caller's buffers
 * (`openRead`) and metadata (`head`). Errors are its PodminErrors (OBJECT_NOT_FOUND for a
 * missing key, OBJECT_TOO_LARGE over the bound, ACCESS_DENIED or BUCKET_UNAVAILABLE otherwise).
 */
export type RegistryStore = Pick<ObjectStore, 'get' | 'openRead' | 'head'>;

/** Injection token of the registry's {@link StructuredLogger}. */
export const REGISTRY_LOGGER = Symbol('REGISTRY_LOGGER');

/** Log levels of a structured log line. */
export type { LogLevel, StructuredLogger } from '@podmin/agent-util-logging';
