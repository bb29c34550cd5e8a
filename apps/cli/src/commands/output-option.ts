import type { Argv } from 'yargs';
import {
  OUTPUT_DESCRIPTION,
  OUTPUT_FORMATS,
  StructuredOutputReporter,
  parseOutputFormat,
  printResult,
  type OutputFormat,
  type ResultView,
} from '@podmin/cli-util-io';
import type { CliContext } from '../cli-context';

/** The `-o/--output` flag every data command takes. */
export interface OutputArgs {
  output: string;
}

/**
 * Adds `-o/--output table|json|yaml|name` to a command, with `examples` showing it
 * (`[command, what it prints]`). `legacyText` also accepts `text`, deploy's earlier name for
 * `table` (deprecated).
 */
export function withOutputOption<T>(
  y: Argv<T>,
  examples: ReadonlyArray<readonly [string, string]>,
  options: { legacyText?: boolean } = {},
) {
  let built = y.option('output', {
    alias: 'o',
    type: 'string',
    choices: options.legacyText ? [...OUTPUT_FORMATS, 'text'] : [...OUTPUT_FORMATS],
    default: 'table',
    describe: options.legacyText
      ? `${OUTPUT_DESCRIPTION}; text is a deprecated alias of table`
      : OUTPUT_DESCRIPTION,
  });
  for (const [command, description] of examples) built = built.example(command, description);
  return built;
}

/**
 * Runs a command's body with the output format of `-o`, then prints the result it returns
 * through the one printer. With json, yaml or name the body's reporter (`ctx.reporter`, also
 * what providers use) holds back the human result lines libraries report (`held`), and json
 * and yaml drop progress; the original reporter is back once the command is done.
 */
export async function runWithOutput<T>(
  ctx: CliContext,
  output: unknown,
  body: (format: OutputFormat, held: () => readonly string[]) => Promise<ResultView<T>>,
): Promise<void> {
  const format = parseOutputFormat(output);
  const original = ctx.reporter;
  const structured =
    format === 'table' ? undefined : new StructuredOutputReporter(original, format);
  if (structured !== undefined) ctx.reporter = structured;
  try {
    const view = await body(format, () => structured?.held ?? []);
    await printResult(original, format, view);
  } finally {
    ctx.reporter = original;
  }
}
