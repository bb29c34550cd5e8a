/** The default window in which a repeated warning is written once and then only counted. */
export const REPEAT_WINDOW_MS = 60_000;

/** Most distinct warnings folded at once; past this, lines are written unfolded. */
const MAX_FOLDED = 1_000;

interface Folded {
  /** The line's level and message, for the summary. */
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
  /** Occurrences not written in the current window. */
  suppressed: number;
  timer: NodeJS.Timeout;
}

/**
 * Folds repeated warnings: the first occurrence of a warning (its level, message and cause,
 * digits ignored) is written; repeats within the window are only counted, and at the window's
 * end one summary line says how often it repeated. While a fault lasts that is one line per
 * window per distinct cause, however fast the loop that hits it; once a window passes without a
 * repeat, the next occurrence is written whole again.
 */
export class RepeatFolder {
  private readonly folded = new Map<string, Folded>();

  constructor(
    private readonly summarize: (
      level: string,
      msg: string,
      fields: Record<string, unknown>,
    ) => void,
    private readonly windowMs: number = REPEAT_WINDOW_MS,
  ) {}

  /** True when the line should be written; false when it was counted as a repeat. */
  admit(level: string, msg: string, fields: Record<string, unknown>): boolean {
    const key = foldKey(level, msg, fields);
    const entry = this.folded.get(key);
    if (entry !== undefined) {
      entry.suppressed++;
      return false;
    }
    if (this.folded.size >= MAX_FOLDED) return true;
    const created: Folded = {
      level,
      msg,
      fields,
      suppressed: 0,
      timer: this.schedule(key),
    };
    this.folded.set(key, created);
    return true;
  }

  /** Writes the pending counts now and forgets every fold (at shutdown). */
  flush(): void {
    for (const [key, entry] of this.folded) {
      clearTimeout(entry.timer);
      this.folded.delete(key);
      if (entry.suppressed > 0) this.emit(entry);
    }
  }

  private schedule(key: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.windowEnded(key), this.windowMs);
    timer.unref();
    return timer;
  }

  private windowEnded(key: string): void {
    const entry = this.folded.get(key);
    if (entry === undefined) return;
    if (entry.suppressed === 0) {
      this.folded.delete(key);
      return;
    }
    this.emit(entry);
    // Still repeating: keep folding for another window.
    entry.suppressed = 0;
    entry.timer = this.schedule(key);
  }

  private emit(entry: Folded): void {
    this.summarize(entry.level, entry.msg, {
      ...entry.fields,
      repeated: entry.suppressed,
      repeatedWithinSeconds: Math.round(this.windowMs / 1000),
    });
  }
}

/** Level, message and cause, with digits folded so counters and ages do not split a warning. */
function foldKey(level: string, msg: string, fields: Record<string, unknown>): string {
  const cause = fields['error'];
  const text = cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : '';
  return `${level}\u0000${msg}\u0000${text.replace(/\d+/g, '#')}`;
}
