/**
 * kubelet's CRI container log format, one record per line:
 * `<RFC 3339 time with nanoseconds> <stdout|stderr> <P|F> <text>`. A line longer than the
 * runtime's buffer is split into partial (`P`) records ended by a full (`F`) one; readers
 * rejoin them per stream.
 */
export interface CriRecord {
  /** The timestamp as written (nanosecond precision is kept for display). */
  time: string;
  /** Milliseconds since the epoch of `time`. */
  timeMs: number;
  stream: 'stdout' | 'stderr';
  /** True for a partial record that a later record of the same stream continues. */
  partial: boolean;
  text: string;
}

const CRI_LINE = /^(\S+) (stdout|stderr) ([PF])(?: (.*))?$/s;

/** One CRI log line; undefined for a line that is not in the format (it is skipped). */
export function parseCriLine(line: string): CriRecord | undefined {
  const m = CRI_LINE.exec(line);
  if (m === null) return undefined;
  const time = m[1] as string;
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return {
    time,
    timeMs,
    stream: m[2] as 'stdout' | 'stderr',
    partial: m[3] === 'P',
    text: m[4] ?? '',
  };
}

/** A whole log line a container wrote: its partial records rejoined. */
export interface LogLine {
  /** Time of the line's first record. */
  time: string;
  timeMs: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

/**
 * Rejoins partial records per stream (stdout and stderr interleave in one file). A line whose
 * end never came is returned by `flush` as it stands.
 */
export class CriLineJoiner {
  private readonly open = new Map<'stdout' | 'stderr', LogLine>();

  /** Adds one record; returns the line it completes, if any. */
  push(record: CriRecord): LogLine | undefined {
    const started = this.open.get(record.stream);
    const line: LogLine = started
      ? { ...started, text: started.text + record.text }
      : { time: record.time, timeMs: record.timeMs, stream: record.stream, text: record.text };
    if (record.partial) {
      this.open.set(record.stream, line);
      return undefined;
    }
    this.open.delete(record.stream);
    return line;
  }

  /** The lines still waiting for their end, oldest first. */
  flush(): LogLine[] {
    const out = [...this.open.values()].sort((a, b) => a.timeMs - b.timeMs);
    this.open.clear();
    return out;
  }
}

/** Every whole line of a CRI log text, in order (an unfinished last line included). */
export function criLines(text: string): LogLine[] {
  const joiner = new CriLineJoiner();
  const out: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const record = parseCriLine(raw);
    if (record === undefined) continue;
    const line = joiner.push(record);
    if (line !== undefined) out.push(line);
  }
  return [...out, ...joiner.flush()];
}
