import type { LogLevel, StructuredLogger } from '@podmin/agent-util-logging';

/** One recorded log line. */
export interface LogLine {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

/** A hand-written StructuredLogger fake that keeps every line for assertions. */
export class RecordingLog implements StructuredLogger {
  readonly lines: LogLine[] = [];

  event(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level, msg, fields });
  }

  /** The messages, in order. */
  messages(): string[] {
    return this.lines.map((l) => l.msg);
  }
}
