/** One structured log line's fields. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** Writes one JSON object per line: time, level, msg, then fields. Secrets must never be passed. */
export interface JsonLogger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Writes a line produced elsewhere (a child's own JSON line) unchanged. */
  raw(line: string): void;
}

/** A JSON-lines logger writing to a stream (stderr by default). */
export function createJsonLogger(
  component: string,
  out: NodeJS.WritableStream = process.stderr,
  now: () => Date = () => new Date(),
): JsonLogger {
  const write = (level: string, msg: string, fields: LogFields = {}): void => {
    out.write(
      JSON.stringify({ time: now().toISOString(), level, component, msg, ...fields }) + '\n',
    );
  };
  return {
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    raw: (line) => out.write(line.endsWith('\n') ? line : line + '\n'),
  };
}
