import { ContainerfileError } from './errors';

/** Variables visible to a substitution: a name maps to its value, or is unset. */
export type Variables = ReadonlyMap<string, string>;

/** Where an expansion happens, for error messages. */
export interface WordSite {
  /** File name shown in errors. */
  file: string;
  /** 1-based line of the instruction. */
  line: number;
  /** The Containerfile escape character (`\` or `` ` ``). */
  escape: string;
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Splits `text` into words on unquoted whitespace, removing quotes and escapes and expanding
 * `$VAR`, `${VAR}`, `${VAR:-default}` and `${VAR:+alternative}` (inside double quotes too,
 * never inside single quotes), as the Dockerfile reference describes for instructions that
 * support environment replacement. Written by hand: the rules are Dockerfile-specific and
 * no maintained npm library implements them.
 */
export function expandWords(text: string, vars: Variables, site: WordSite): string[] {
  return lex(text, vars, site, true);
}

/** Like {@link expandWords} but keeps whitespace: the whole text is one word. */
export function expandWord(text: string, vars: Variables, site: WordSite): string {
  return lex(text, vars, site, false).join('');
}

function lex(text: string, vars: Variables, site: WordSite, split: boolean): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  // An unquoted word that expands to nothing is dropped, as a shell does.
  let quoted = false;
  let i = 0;
  const fail = (why: string): never => {
    throw new ContainerfileError(site.file, site.line, why);
  };
  const readVariable = (): string => {
    // at text[i] === '$'
    i++;
    if (text[i] === '{') {
      const close = findClose(text, i + 1);
      if (close === -1) fail('unterminated ${ in variable substitution');
      const body = text.slice(i + 1, close);
      i = close + 1;
      const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\+|-|\+)([\s\S]*))?$/.exec(body);
      if (match === null) {
        return fail(
          `unsupported variable substitution \${${body}}; use $NAME, \${NAME}, \${NAME:-default} or \${NAME:+alternative}`,
        );
      }
      const [, name = '', operator, word = ''] = match;
      const value = vars.get(name);
      switch (operator) {
        case undefined:
          return value ?? '';
        case ':-':
          return value === undefined || value === '' ? expandWord(word, vars, site) : value;
        case '-':
          return value === undefined ? expandWord(word, vars, site) : value;
        case ':+':
          return value === undefined || value === '' ? '' : expandWord(word, vars, site);
        default:
          return value === undefined ? '' : expandWord(word, vars, site);
      }
    }
    const start = i;
    if (i < text.length && NAME_START.test(text[i] ?? '')) {
      while (i < text.length && NAME_CHAR.test(text[i] ?? '')) i++;
      return vars.get(text.slice(start, i)) ?? '';
    }
    return '$';
  };
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (split && /\s/.test(ch)) {
      if (inWord && (current !== '' || quoted)) words.push(current);
      current = '';
      inWord = false;
      quoted = false;
      i++;
      continue;
    }
    inWord = true;
    if (ch === site.escape) {
      if (i + 1 < text.length) current += text[i + 1];
      i += 2;
    } else if (ch === "'") {
      quoted = true;
      const close = text.indexOf("'", i + 1);
      if (close === -1) fail('unterminated single quote');
      current += text.slice(i + 1, close);
      i = close + 1;
    } else if (ch === '"') {
      quoted = true;
      i++;
      for (;;) {
        if (i >= text.length) fail('unterminated double quote');
        const c = text[i] ?? '';
        if (c === '"') {
          i++;
          break;
        }
        if (c === site.escape && i + 1 < text.length && /["$`\\]/.test(text[i + 1] ?? '')) {
          current += text[i + 1];
          i += 2;
        } else if (c === '$') {
          current += readVariable();
        } else {
          current += c;
          i++;
        }
      }
    } else if (ch === '$') {
      current += readVariable();
    } else {
      current += ch;
      i++;
    }
  }
  if (inWord && (current !== '' || quoted || !split)) words.push(current);
  return words;
}

function findClose(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '{') depth++;
    if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Parses `text` as a JSON array of strings (exec form); undefined when it is not one. */
export function parseJsonArray(text: string): string[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      return value;
    }
  } catch {
    // not JSON: the instruction is in shell form
  }
  return undefined;
}
