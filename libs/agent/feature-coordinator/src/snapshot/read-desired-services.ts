import pLimit from 'p-limit';
import {
  entriesOf,
  readIndex,
  readServicePayload,
  versionOf,
  type DesiredStateReader,
  type IndexVersion,
} from '@podmin/data-access-desired-state';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';
import type { ServicePayload } from '@podmin/util-manifest';
import type { DesiredIndex } from '@podmin/util-desired-state';

/** A Service payload left out of the snapshot, with why. */
export interface SkippedService {
  /** The payload key. */
  readonly key: string;
  /** The index entries (`<nodegroup>/<deployment>`) that reference it. */
  readonly entries: readonly string[];
  readonly code: PodminErrorCode;
  readonly message: string;
}

/** Every Service of the committed desired state. */
export interface DesiredServices {
  /** The index version the Services were read from (null: no index, so no Services). */
  readonly version: IndexVersion;
  /** Verified, strictly parsed payloads, in payload-key order. */
  readonly services: readonly ServicePayload[];
  /** Payloads that are missing or failed verification or parsing. */
  readonly skipped: readonly SkippedService[];
  /** The index entries the Services were read from (rollouts plan from them). */
  readonly entries: DesiredIndex;
}

/** Options of {@link readDesiredServices}. */
export interface ReadDesiredServicesOptions {
  /** Payload reads in flight at once. Default 16. */
  concurrency?: number;
  /** Cancels every read. */
  signal?: AbortSignal;
  /** Receives a warning per skipped payload. */
  log?: StructuredLogger;
}

/** Default number of concurrent payload reads: enough to hide S3 latency, few enough for a 2-vCPU node. */
export const DEFAULT_SERVICE_READ_CONCURRENCY = 16;

// Failures of one payload object itself: leaving that Service out is better than withholding
// every other Service's update. Anything else (bucket unavailable, access denied, cancellation)
// fails the whole read so a transient outage never looks like deleted Services.
const PAYLOAD_FAULTS: ReadonlySet<PodminErrorCode> = new Set([
  'OBJECT_NOT_FOUND',
  'OBJECT_TOO_LARGE',
  'INVALID_MANIFEST',
  'INVALID_ARGUMENT',
  'INTERNAL',
]);

/**
 * Reads the complete index and every Service payload it references, of all NodeGroups
 * (Services are cluster-wide), with bounded concurrency. Each payload is SHA-512 verified and
 * strictly parsed by `@podmin/data-access-desired-state`; one that is missing or fails is
 * skipped and reported, not fatal. Bucket errors reject.
 */
export async function readDesiredServices(
  store: Pick<DesiredStateReader, 'get'>,
  options: ReadDesiredServicesOptions = {},
): Promise<DesiredServices> {
  const signalOptions = options.signal === undefined ? {} : { signal: options.signal };
  const read = await readIndex(store, signalOptions);
  const referrers = new Map<string, string[]>();
  for (const [entry, { service }] of Object.entries(entriesOf(read))) {
    if (service === undefined) continue;
    const list = referrers.get(service);
    if (list === undefined) referrers.set(service, [entry]);
    else list.push(entry);
  }
  const keys = [...referrers.keys()].sort();
  const limit = pLimit(options.concurrency ?? DEFAULT_SERVICE_READ_CONCURRENCY);
  const results = await Promise.all(
    keys.map((key) =>
      limit(async (): Promise<ServicePayload | SkippedService> => {
        try {
          return await readServicePayload(store, key, signalOptions);
        } catch (err) {
          options.signal?.throwIfAborted();
          if (!(err instanceof PodminError) || !PAYLOAD_FAULTS.has(err.code)) throw err;
          const code = err.code;
          const entries = (referrers.get(key) ?? []).sort();
          options.log?.event('warn', 'skip Service payload', {
            key,
            entries,
            code,
            error: err.message,
          });
          return { key, entries, code, message: err.message };
        }
      }),
    ),
  );
  const services: ServicePayload[] = [];
  const skipped: SkippedService[] = [];
  for (const result of results) {
    if ('object' in result) services.push(result);
    else skipped.push(result);
  }
  return { version: versionOf(read), services, skipped, entries: entriesOf(read) };
}
