import type { LoggerService } from '@nestjs/common';
import { RepeatFolder, REPEAT_WINDOW_MS } from './repeat-folder';
/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured logging: short verb messages with fields; secrets are never passed. */
export interface StructuredLogger {
  /** Writes one structured line. */
  event(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

/** Where log lines go and what time it is; injectable for tests. */
export interface JsonLoggerOptions {
  /** Receives each line, newline included (default: process.stderr). */
  write?: (line: string) => void;
  /** Clock for the `time` field. */
  now?: () => Date;
  /** Lowest level written (default `info`). */
  level?: LogLevel;
  /** Process name in every line. */
  service?: string;
  /**
   * Warnings and errors repeated within this window are written once, then counted in one
   * summary line per window (default 60 s; 0 writes every line).
   */
  repeatWindowMs?: number;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * One JSON object per line (`time`, `level`, `service`, `msg`, fields) for agent processes;
 * also Nest's LoggerService so framework messages share the format.
 */
export class JsonLogger implements StructuredLogger, LoggerService {
  private readonly write: (line: string) => void;
  private readonly now: () => Date;
  private readonly minimum: number;
  private readonly service: string | undefined;
  private readonly folder: RepeatFolder | undefined;

  constructor(options: JsonLoggerOptions = {}) {
    this.write = options.write ?? ((line) => void process.stderr.write(line));
    this.now = options.now ?? (() => new Date());
    this.minimum = RANK[options.level ?? 'info'];
    this.service = options.service;
    const windowMs = options.repeatWindowMs ?? REPEAT_WINDOW_MS;
    this.folder =
      windowMs > 0
        ? new RepeatFolder(
            (level, msg, fields) => this.line(level as LogLevel, msg, fields),
            windowMs,
          )
        : undefined;
  }

  /**
   * Writes one structured line. A warning or error repeating one already written within the
   * window (same message and cause) is counted instead, and summarised when the window ends.
   */
  event(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    if (RANK[level] < this.minimum) return;
    if (RANK[level] >= RANK.warn && this.folder && !this.folder.admit(level, msg, fields)) return;
    this.line(level, msg, fields);
  }

  /** Writes the counts of folded repeats now (before the process exits). */
  flushRepeats(): void {
    this.folder?.flush();
  }

  private line(level: LogLevel, msg: string, fields: Record<string, unknown>): void {
    const line = { time: this.now().toISOString(), level, service: this.service, msg, ...fields };
    const replacer = level === 'error' ? errorReplacer : expectedErrorReplacer;
    this.write(`${JSON.stringify(line, replacer)}\n`);
  }

  /** Writes a line produced elsewhere (a child process's own JSON line) unchanged. */
  raw(line: string): void {
    this.write(line.endsWith('\n') ? line : `${line}\n`);
  }

  /** Nest: informational message. */
  log(message: unknown, ...context: unknown[]): void {
    this.nest('info', message, context);
  }

  /** Nest: error, optionally with a stack. */
  error(message: unknown, ...context: unknown[]): void {
    this.nest('error', message, context);
  }

  /** Nest: warning. */
  warn(message: unknown, ...context: unknown[]): void {
    this.nest('warn', message, context);
  }

  /** Nest: debug message. */
  debug(message: unknown, ...context: unknown[]): void {
    this.nest('debug', message, context);
  }

  /** Nest: verbose message, logged as debug. */
  verbose(message: unknown, ...context: unknown[]): void {
    this.nest('debug', message, context);
  }

  /** Nest: fatal message, logged as error. */
  fatal(message: unknown, ...context: unknown[]): void {
    this.nest('error', message, context);
  }

  private nest(level: LogLevel, message: unknown, context: unknown[]): void {
    const strings = context.filter((c): c is string => typeof c === 'string');
    const fields: Record<string, unknown> = {};
    if (strings.length > 0) fields['context'] = strings[strings.length - 1];
    if (level === 'error' && strings.length > 1) fields['stack'] = strings[0];
    this.event(level, message instanceof Error ? message.message : String(message), fields);
  }
}

/** Errors keep their stack, unless they are expected I/O faults (a system or podmin code). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  if (isExpectedFault(value))
    return { name: value.name, message: value.message, code: codeOf(value) };
  return { name: value.name, message: value.message, stack: value.stack };
}

/** Below `error`, an error is an expected fault the message names: no stack. */
function expectedErrorReplacer(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = codeOf(value);
  return code === undefined
    ? { name: value.name, message: value.message }
    : { name: value.name, message: value.message, code };
}

function codeOf(err: Error): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** System errors (ECONNREFUSED, ENOTDIR, …) and podmin's own codes other than INTERNAL. */
function isExpectedFault(err: Error): boolean {
  const code = codeOf(err);
  return code !== undefined && code !== 'INTERNAL';
}
