import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import type { ElectionTimer, LeaseStore } from './election.ports';
import type { ElectionTiming } from './election-timing';
import { MAX_LEADER_RECORD_BYTES, parseLeaderRecord, type LeaderRecord } from './leader-record';

/** What a read found: no record, or a record (unparseable ones have no `record`). */
export type RecordRead =
  | { kind: 'absent' }
  | { kind: 'present'; etag: string; body: string; record: LeaderRecord | undefined };

/** Options of one conditional write. */
export interface RecordPutOptions {
  /** Ends a wait between retries; the write then gives up and resolves undefined. */
  readonly signal?: AbortSignal;
  /** Called just before each attempt is sent (the elector notes the body and the time). */
  readonly beforeAttempt?: () => void;
  /** Called before retrying attempt `retry` (1-based) after a 409. */
  readonly onRetry?: (retry: number) => void;
}

/** What {@link LeaderRecordIo} reads and writes with. */
export interface LeaderRecordIoDeps {
  readonly store: LeaseStore;
  /** The record's object key. */
  readonly key: string;
  readonly timer: ElectionTimer;
  readonly timing: Pick<ElectionTiming, 'conflictRetries' | 'conflictRetryMs'>;
  /** Random source in [0, 1) for the retry jitter. */
  readonly random: () => number;
  readonly log: StructuredLogger;
}

/**
 * The election's reads and compare-and-swap writes of its record (`dns/leader.json`): a read
 * keeps the raw body beside the parsed record (an unparseable record is logged once per
 * ETag); a write is conditional on the record's absence or its ETag and is retried, jittered,
 * when S3 answers 409 for a concurrent request.
 */
export class LeaderRecordIo {
  private unreadableEtag: string | undefined;

  constructor(private readonly deps: LeaderRecordIoDeps) {}

  /** The record as stored; rejects when the bucket fails (not when the record is absent). */
  async read(): Promise<RecordRead> {
    const object = await this.deps.store
      .get(this.deps.key, { maxBytes: MAX_LEADER_RECORD_BYTES })
      .catch((err: unknown) => {
        if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
        throw err;
      });
    if (object === undefined) return { kind: 'absent' };
    const body = object.body.toString('utf8');
    let record: LeaderRecord | undefined;
    try {
      record = parseLeaderRecord(object.body);
      this.unreadableEtag = undefined;
    } catch (err) {
      if (this.unreadableEtag !== object.etag) {
        this.unreadableEtag = object.etag;
        this.deps.log.event('warn', 'leader record unreadable', { etag: object.etag, error: err });
      }
    }
    return { kind: 'present', etag: object.etag, body, record };
  }

  /**
   * Creates the record (`etag` undefined) or replaces the one stored with `etag`; resolves the
   * new ETag, or undefined when `signal` aborted a wait between retries. Rejects with the
   * store's error otherwise (PRECONDITION_FAILED, or CONFLICT once the retries are spent).
   */
  async put(
    body: string,
    etag: string | undefined,
    options: RecordPutOptions = {},
  ): Promise<string | undefined> {
    const { store, key, timing } = this.deps;
    for (let attempt = 0; ; attempt++) {
      options.beforeAttempt?.();
      try {
        return etag === undefined
          ? await store.putIfAbsent(key, body)
          : await store.putIfMatch(key, body, etag);
      } catch (err) {
        if (!hasCode(err, 'CONFLICT') || attempt >= timing.conflictRetries) throw err;
        options.onRetry?.(attempt + 1);
        await this.deps.timer.sleep(
          timing.conflictRetryMs * (0.5 + this.deps.random()),
          options.signal,
        );
        if (options.signal?.aborted === true) return undefined;
      }
    }
  }
}
