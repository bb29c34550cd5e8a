import type { ProgressUnit } from './progress-format';

/** All user-facing output of the CLI goes through this port: results to stdout, the rest to stderr. */
export interface Reporter {
  /** A status line for the operator (stderr). */
  info(message: string): void;
  /** A warning (stderr). */
  warn(message: string): void;
  /**
   * Progress of a long operation, one transfer per label (stderr): a bar with amount, rate and
   * time left on a TTY, plain periodic lines otherwise. `unit` defaults to items.
   */
  progress(label: string, done: number, total: number, unit?: ProgressUnit): void;
  /** The command's result (stdout): what scripts consume. */
  result(text: string): void;
  /** Asks a yes/no question on the terminal; false when there is no TTY to ask on. */
  confirm(question: string): Promise<boolean>;
}

/** A Reporter that records everything, for in-process tests of command handlers. */
export class RecordingReporter implements Reporter {
  readonly infos: string[] = [];
  readonly warnings: string[] = [];
  readonly results: string[] = [];
  readonly progressEvents: Array<{
    label: string;
    done: number;
    total: number;
    unit?: ProgressUnit;
  }> = [];
  /** Answer given to every confirm() call. */
  answer = false;

  info(message: string): void {
    this.infos.push(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
  progress(label: string, done: number, total: number, unit?: ProgressUnit): void {
    this.progressEvents.push({ label, done, total, ...(unit === undefined ? {} : { unit }) });
  }
  result(text: string): void {
    this.results.push(text);
  }
  confirm(): Promise<boolean> {
    return Promise.resolve(this.answer);
  }
  /** Everything written to stdout, joined. */
  get stdout(): string {
    return this.results.map((r) => (r.endsWith('\n') ? r : r + '\n')).join('');
  }
}
