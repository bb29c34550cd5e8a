import type {
  GetOptions,
  StoredObject,
  ConditionalGetResult,
} from '@podmin/data-access-object-store';

/** The conditional object operations the CA services need from the cluster bucket (an ObjectStore fits). */
export interface CaStateObjects {
  /** Reads a whole object; OBJECT_NOT_FOUND when absent. */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Reads an object unless its ETag still equals `etag`. */
  getIfChanged(key: string, etag: string, options?: GetOptions): Promise<ConditionalGetResult>;
  /** Creates only if absent; PRECONDITION_FAILED when it exists. */
  putIfAbsent(key: string, body: Buffer | string): Promise<string>;
  /** Replaces only if the ETag matches; PRECONDITION_FAILED otherwise. */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<string>;
}

/** The current content of the external trust bundle. */
export interface ExternalBundleContent {
  body: string;
  etag: string;
}

/**
 * The `--workload-ca-publish s3://BUCKET/KEY` destination: one exact, Podmin-dedicated object
 * replaced by ETag compare-and-swap.
 */
export interface ExternalBundle {
  /** Where it lives, for messages (e.g. `s3://bucket/key`). */
  readonly location: string;
  /** Reads the object; undefined when absent. */
  read(): Promise<ExternalBundleContent | undefined>;
  /** Writes `body` if the object still has `etag` (or is still absent when undefined); PRECONDITION_FAILED otherwise. */
  write(body: string, etag: string | undefined): Promise<string>;
}

/**
 * Whether this node leads now, asked before every leader-only duty (CA rotation, the external
 * bundle). The coordinator answers it; the writes are fenced by their own conditional writes.
 */
export interface LeadershipCheck {
  /** True while this node holds the lease with at least `minValidMs` of its duties left. */
  leading(minValidMs: number): Promise<boolean>;
}

/** What a restart request of the log exporter did. */
export type LogExporterRestart =
  /** The service manager restarted it (or left it stopped: it was not running). */
  | { outcome: 'restarted' }
  /** This node has no such service to restart (no systemd, or not the host's own node root). */
  | { outcome: 'skipped'; why: string }
  | { outcome: 'failed'; error: string };

/**
 * The node's log exporter (Fluent Bit, `fluent-bit.service`), restarted onto one concrete
 * identity generation or CA bundle after either was replaced. Never starts a stopped exporter.
 */
export interface LogExporter {
  /** Restarts the exporter if it runs; never throws. */
  restart(): Promise<LogExporterRestart>;
}
