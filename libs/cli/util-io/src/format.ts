import { PodminError, escapeControlCharacters } from '@podmin/util-errors';

/** Renders rows as a left-aligned table with a header, columns separated by three spaces. */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [render(headers), ...rows.map(render)].join('\n') + '\n';
}

/**
 * Formats an error for the terminal: `Error: <message>`, a `Caused by:` line per cause,
 * a hint, and the stack only when `debug` is set. Control characters are escaped: messages
 * echo input (names, paths, flag values) that must not drive the terminal.
 */
export function formatError(err: unknown, debug: boolean): string {
  const lines: string[] = [];
  const message = err instanceof Error ? err.message : String(err);
  // A message may be multi-line by construction (a list of problems); causes and hints are one line.
  lines.push(`Error: ${escapeControlCharacters(message, { keepNewlines: true })}`);
  const seen = new Set<unknown>([err]);
  let cause = err instanceof Error ? err.cause : undefined;
  while (cause !== undefined && !seen.has(cause)) {
    seen.add(cause);
    const text = cause instanceof Error ? cause.message || cause.name : JSON.stringify(cause);
    if (!message.includes(text)) lines.push(`Caused by: ${escapeControlCharacters(text)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  if (err instanceof PodminError && err.hint)
    lines.push(`Hint: ${escapeControlCharacters(err.hint)}`);
  if (debug && err instanceof Error && err.stack)
    lines.push('', escapeControlCharacters(err.stack, { keepNewlines: true }));
  else if (!(err instanceof PodminError)) lines.push('(run with --debug for the stack trace)');
  return lines.join('\n') + '\n';
}
