import { createHash } from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import type { Clock } from '@podmin/util-pki';
import type { LogLevel, StructuredLogger } from '@podmin/agent-util-logging';
import type {
  ExternalBundle,
  ExternalBundleContent,
  LogExporter,
  LogExporterRestart,
} from '../identity.ports';

/** A settable clock for stepping through time in tests. */
export class FakeClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date): void {
    this.current = new Date(date);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** An in-memory external bundle destination that can lag (serve stale reads) and log its writes. */
export class FakeExternalBundle implements ExternalBundle {
  readonly location = 's3://trust-bucket/podmin/ca.pem';
  content: ExternalBundleContent | undefined;
  /** Number of writes so far. */
  writes = 0;
  /** While true, reads return what was there when it was set: writes are not observable. */
  stale = false;
  private previous: ExternalBundleContent | undefined;

  constructor(private readonly events: string[] = []) {}

  read(): Promise<ExternalBundleContent | undefined> {
    return Promise.resolve(this.stale ? this.previous : this.content);
  }

  write(body: string, etag: string | undefined): Promise<string> {
    const current = this.stale ? this.previous : this.content;
    if (current?.etag !== etag) {
      return Promise.reject(
        new PodminError('PRECONDITION_FAILED', 'writing external bundle: ETag changed'),
      );
    }
    const next = { body, etag: `"${createHash('md5').update(body).digest('hex')}"` };
    this.content = next;
    // While stale, readers keep seeing the content from before `stale` was set.
    if (!this.stale) this.previous = next;
    this.writes++;
    this.events.push(`external ${body.match(/BEGIN CERTIFICATE/g)?.length ?? 0} certs`);
    return Promise.resolve(next.etag);
  }

  /** Someone else replaced the object. */
  tamper(body: string): void {
    this.content = { body, etag: `"${createHash('md5').update(body).digest('hex')}"` };
    this.previous = this.content;
  }
}

/** A log exporter that records each restart and answers with the next queued result (default: restarted). */
export class RecordingLogExporter implements LogExporter {
  restarts = 0;
  /** Results handed out in order before falling back to `restarted`. */
  readonly next: LogExporterRestart[] = [];

  restart(): Promise<LogExporterRestart> {
    this.restarts++;
    return Promise.resolve(this.next.shift() ?? { outcome: 'restarted' });
  }
}

/** A logger that keeps every event, for asserting what was logged and how often. */
export class RecordingLogger implements StructuredLogger {
  readonly events: Array<{ level: LogLevel; msg: string; fields: Record<string, unknown> }> = [];

  event(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    this.events.push({ level, msg, fields });
  }

  /** The messages logged at `level`. */
  messages(level: LogLevel): string[] {
    return this.events.filter((e) => e.level === level).map((e) => e.msg);
  }
}
