import { ContainerfileError } from './errors';
import type { Instruction } from './parser';
import type { WordSite } from './words';
import { expandWord } from './words';

/** Splits on unquoted whitespace without removing quotes (substitution happens later). */
export function splitRaw(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (quote !== undefined) {
      current += ch;
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) current += text[++i];
    } else if (/\s/.test(ch)) {
      if (current !== '') words.push(current);
      current = '';
    } else {
      if (ch === '"' || ch === "'") quote = ch;
      if (ch === '\\' && i + 1 < text.length) {
        current += ch + (text[++i] ?? '');
        continue;
      }
      current += ch;
    }
  }
  if (current !== '') words.push(current);
  return words;
}

/** `KEY=value …` pairs, or the legacy `KEY value with spaces` form of ENV and LABEL. */
export function keyValues(
  ins: Instruction,
  vars: ReadonlyMap<string, string>,
  site: WordSite,
): Array<[string, string]> {
  const raw = splitRaw(ins.args);
  const first = raw[0];
  if (first === undefined) {
    throw new ContainerfileError(site.file, site.line, `${ins.keyword} needs KEY=value`);
  }
  if (!first.includes('=')) {
    if (ins.keyword === 'LABEL') {
      throw new ContainerfileError(site.file, site.line, 'LABEL needs KEY=value pairs');
    }
    const rest = ins.args.slice(ins.args.indexOf(first) + first.length).trim();
    return [[expandWord(first, vars, site), expandWord(rest, vars, site)]];
  }
  return raw.map((word): [string, string] => {
    const eq = word.indexOf('=');
    if (eq <= 0) {
      throw new ContainerfileError(
        site.file,
        site.line,
        `${ins.keyword} ${JSON.stringify(word)} is not KEY=value`,
      );
    }
    return [expandWord(word.slice(0, eq), vars, site), expandWord(word.slice(eq + 1), vars, site)];
  });
}
