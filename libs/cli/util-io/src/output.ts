import type { Reporter } from './reporter';
import type { ProgressUnit } from './progress-format';
import { UsageError } from './exit-codes';

/** The formats `-o/--output` takes, the default first. */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml', 'name'] as const;

/** How a command prints its result: a table for people, json/yaml for scripts, names for pipes. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * Earlier spellings `-o` still accepts: `deploy -o text` printed what `table` prints now.
 * Deprecated; kept so existing scripts keep working.
 */
export const OUTPUT_ALIASES: Readonly<Record<string, OutputFormat>> = { text: 'table' };

/** What every data command's `-o/--output` help says. */
export const OUTPUT_DESCRIPTION =
  'Output format: table (default, for people), json or yaml (one document on stdout, nothing else there and no progress bars; warnings stay on stderr), name (one <kind>/<name> per line, like kubectl)';

/**
 * The format an `-o` value names (aliases resolved); a UsageError naming the flag and the
 * allowed values for anything else.
 */
export function parseOutputFormat(value: unknown): OutputFormat {
  const text = typeof value === 'string' ? value : String(value);
  const alias = OUTPUT_ALIASES[text];
  if (alias !== undefined) return alias;
  if ((OUTPUT_FORMATS as readonly string[]).includes(text)) return text as OutputFormat;
  throw new UsageError(
    `--output: ${JSON.stringify(text)} is not a format; use one of ${OUTPUT_FORMATS.join(', ')}`,
  );
}

/** Whether a format is a machine-readable document (json, yaml): progress is then left out. */
export function isDocumentFormat(format: OutputFormat): boolean {
  return format === 'json' || format === 'yaml';
}

/**
 * A command's typed result and its two human renderings: the printer picks one by format.
 * `data` is what json and yaml print, so its shape is the command's documented contract.
 */
export interface ResultView<T> {
  data: T;
  /** The table (or line) people read; may be empty for a command that says everything on stderr. */
  table(): string;
  /** One `<kind>/<name>` per item, the way `kubectl get -o name` prints them. */
  names(): readonly string[];
}

/**
 * Renders a result in a format. json is two-space indented with a final newline; yaml is the
 * `yaml` package's document (loaded only when asked for, the CLI's start time is budgeted);
 * name is one name per line.
 */
export async function renderResult<T>(format: OutputFormat, view: ResultView<T>): Promise<string> {
  switch (format) {
    case 'json':
      return JSON.stringify(view.data, null, 2) + '\n';
    case 'yaml': {
      const { stringify } = await import('yaml');
      // JSON-compatible data: no anchors or aliases for shared objects, plain keys.
      return stringify(view.data, { aliasDuplicateObjects: false, lineWidth: 0 });
    }
    case 'name': {
      const names = view.names();
      return names.length === 0 ? '' : names.join('\n') + '\n';
    }
    case 'table':
      return view.table();
  }
}

/**
 * The reporter of a command printing json, yaml or names: what libraries hand to `result()`
 * (their own human lines) is held back, so stdout carries only the printer's document;
 * progress is dropped for json and yaml; info, warnings and questions pass through to stderr.
 */
export class StructuredOutputReporter implements Reporter {
  /** The result lines libraries reported, in order, kept off stdout. */
  readonly held: string[] = [];

  constructor(
    /** The terminal (or recording) reporter the document is finally written to. */
    readonly inner: Reporter,
    private readonly format: OutputFormat,
  ) {}

  info(message: string): void {
    this.inner.info(message);
  }
  warn(message: string): void {
    this.inner.warn(message);
  }
  progress(label: string, done: number, total: number, unit?: ProgressUnit): void {
    if (!isDocumentFormat(this.format)) this.inner.progress(label, done, total, unit);
  }
  result(text: string): void {
    this.held.push(text);
  }
  confirm(question: string): Promise<boolean> {
    return this.inner.confirm(question);
  }
}

/**
 * Prints a command's result in a format through a reporter: the one place json, yaml, names
 * and tables reach stdout. Through a {@link StructuredOutputReporter} the document goes to
 * the reporter it wraps. An empty rendering prints nothing.
 */
export async function printResult<T>(
  reporter: Reporter,
  format: OutputFormat,
  view: ResultView<T>,
): Promise<void> {
  const text = await renderResult(format, view);
  if (text === '') return;
  const target = reporter instanceof StructuredOutputReporter ? reporter.inner : reporter;
  target.result(text);
}
