import { OciFormatError } from './errors';

/** A JSON value as produced by {@link parseStrictJson}. */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Limits of a strict JSON parse. */
export interface StrictJsonOptions {
  /** Largest accepted input in bytes. */
  maxBytes: number;
  /** Deepest accepted nesting of arrays and objects (default 32). */
  maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 32;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// A JSON string token: quotes around unescaped characters above U+001F or escapes.
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/**
 * Parses UTF-8 JSON strictly: rejects input over `maxBytes`, invalid UTF-8, duplicate object
 * keys, nesting deeper than `maxDepth`, and trailing data. JSON.parse silently keeps the last
 * of duplicate keys, which lets two readers see different documents behind one digest, so this
 * small recursive-descent parser is written by hand (node built-ins have no strict mode).
 */
export function parseStrictJson(
  input: Buffer | string,
  what: string,
  options: StrictJsonOptions,
): JsonValue {
  const size = typeof input === 'string' ? Buffer.byteLength(input) : input.length;
  if (size > options.maxBytes) {
    throw new OciFormatError(
      `parsing ${what}: ${size} bytes is over the ${options.maxBytes}-byte limit`,
    );
  }
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input);
    } catch (err) {
      throw new OciFormatError(`parsing ${what}: not valid UTF-8`, { cause: err });
    }
  }
  return parseText(text, what, options.maxDepth ?? DEFAULT_MAX_DEPTH);
}

/**
 * The first object key that appears twice in one object of `text`, in document order, or
 * undefined (also for text that is not JSON: callers check that with JSON.parse first). For
 * readers that parse with JSON.parse and must still refuse duplicate keys.
 */
export function findDuplicateKey(text: string): string | undefined {
  let duplicate: string | undefined;
  try {
    parseText(text, 'document', Infinity, (key) => {
      duplicate = key;
      throw new DuplicateKeyFound();
    });
  } catch (err) {
    if (!(err instanceof DuplicateKeyFound)) return undefined;
  }
  return duplicate;
}

/** Stops {@link findDuplicateKey}'s parse at the first duplicate. */
class DuplicateKeyFound extends Error {}

/** The parser behind both readers: `onDuplicateKey` replaces the failure on a duplicate key. */
function parseText(
  text: string,
  what: string,
  maxDepth: number,
  onDuplicateKey?: (key: string) => void,
): JsonValue {
  let pos = 0;

  const fail = (message: string): never => {
    throw new OciFormatError(`parsing ${what}: ${message} at offset ${pos}`);
  };
  const skipWhitespace = (): void => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const readString = (): string => {
    STRING.lastIndex = pos;
    const match = STRING.exec(text);
    if (match === null) {
      return fail('invalid string');
    }
    pos = STRING.lastIndex;
    return JSON.parse(match[0]) as string;
  };
  const readValue = (depth: number): JsonValue => {
    skipWhitespace();
    const ch = text[pos];
    if (ch === '{' || ch === '[') {
      if (depth >= maxDepth) {
        fail(`nesting deeper than ${maxDepth}`);
      }
      return ch === '{' ? readObject(depth + 1) : readArray(depth + 1);
    }
    if (ch === '"') {
      return readString();
    }
    for (const [literal, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(literal, pos)) {
        pos += literal.length;
        return value;
      }
    }
    NUMBER.lastIndex = pos;
    const match = NUMBER.exec(text);
    if (match === null) {
      return fail('unexpected character');
    }
    pos = NUMBER.lastIndex;
    return Number(match[0]);
  };
  const readObject = (depth: number): { [key: string]: JsonValue } => {
    pos++;
    // A null-prototype object keeps "__proto__" an ordinary key.
    const result = Object.create(null) as { [key: string]: JsonValue };
    const seen = new Set<string>();
    skipWhitespace();
    if (text[pos] === '}') {
      pos++;
      return result;
    }
    for (;;) {
      skipWhitespace();
      if (text[pos] !== '"') {
        fail('expected a string key');
      }
      const key = readString();
      if (seen.has(key)) {
        if (onDuplicateKey) onDuplicateKey(key);
        else fail(`duplicate key ${JSON.stringify(key)}`);
      }
      seen.add(key);
      skipWhitespace();
      if (text[pos] !== ':') {
        fail('expected ":"');
      }
      pos++;
      result[key] = readValue(depth);
      skipWhitespace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === '}') {
        pos++;
        return result;
      }
      fail('expected "," or "}"');
    }
  };
  const readArray = (depth: number): JsonValue[] => {
    pos++;
    const result: JsonValue[] = [];
    skipWhitespace();
    if (text[pos] === ']') {
      pos++;
      return result;
    }
    for (;;) {
      result.push(readValue(depth));
      skipWhitespace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === ']') {
        pos++;
        return result;
      }
      fail('expected "," or "]"');
    }
  };

  const value = readValue(0);
  skipWhitespace();
  if (pos !== text.length) {
    fail('trailing data');
  }
  return value;
}

/** True for a JSON object (not an array or null). */
export function isJsonObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
