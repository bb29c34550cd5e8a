import {
  Composer,
  LineCounter,
  Parser,
  isAlias,
  isNode,
  isPair,
  isScalar,
  isSeq,
  stringify,
  visit,
} from 'yaml';
import type { CST, Document, Node, Pair, Scalar, ToStringOptions, YAMLError } from 'yaml';
import { PodminError, ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';

/** One non-empty document of a stream with the line it starts on (1-based). */
export interface YamlDocument {
  value: unknown;
  line: number;
}

const PARSE_OPTIONS = {
  version: '1.2',
  schema: 'core',
  strict: true,
  uniqueKeys: true,
  merge: false,
  prettyErrors: false,
} as const;

/** Deepest nesting of mappings and lists a manifest may have; real manifests stay far below it. */
export const MAX_YAML_DEPTH = 64;

/**
 * Parses a multi-document YAML stream strictly, keeping each document's start line.
 * Empty documents (a bare `---`, only comments) are skipped.
 */
export function parseYamlDocuments(text: string, source: string): YamlDocument[] {
  // One CST serves the depth check and the composer: parsing it twice (once for the check,
  // once in parseAllDocuments) was a quarter of `podmin validate`'s own time.
  const lineCounter = new LineCounter();
  const tokens = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  checkDepth(tokens, lineCounter, source);
  // What parseAllDocuments does with prettyErrors off; an empty stream is an empty list here.
  const documents = Array.from(new Composer(PARSE_OPTIONS).compose(tokens));
  const problems: FieldProblem[] = [];
  const at = (offset: number | undefined): string =>
    offset === undefined ? source : `${source}:${lineCounter.linePos(offset).line}`;
  const result: YamlDocument[] = [];

  for (const doc of documents) {
    const before = problems.length;
    for (const err of [...doc.errors, ...doc.warnings]) {
      problems.push({ field: at(err.pos[0]), message: describeYamlError(err) });
    }
    checkStrictNodes(doc, at, problems);
    if (problems.length > before || isEmptyDocument(doc)) {
      continue;
    }
    const offset = doc.contents?.range[0] ?? doc.range[0];
    result.push({ value: doc.toJS({ maxAliasCount: 0 }), line: lineCounter.linePos(offset).line });
  }

  if (problems.length > 0) {
    throw new ValidationError(`parsing ${source}`, problems);
  }
  return result;
}

/** Parses a multi-document YAML stream strictly; empty documents are skipped. */
export function parseYamlStream(text: string, source: string): unknown[] {
  return parseYamlDocuments(text, source).map((doc) => doc.value);
}

/**
 * Refuses nesting beyond {@link MAX_YAML_DEPTH} before the document is composed: composing
 * recurses once per level, so a deep enough file would otherwise overflow the stack. The CST
 * parser is iterative, and so is this walk.
 */
function checkDepth(tokens: CST.Token[], lineCounter: LineCounter, source: string): void {
  const stack: Array<{ token: CST.Token | undefined; depth: number }> = [];
  for (const token of tokens) {
    stack.push({ token, depth: 0 });
    while (stack.length > 0) {
      const { token: next, depth } = stack.pop() as { token: CST.Token | undefined; depth: number };
      if (next === undefined) continue;
      if (next.type === 'document') {
        stack.push({ token: next.value, depth });
      } else if (
        next.type === 'block-map' ||
        next.type === 'block-seq' ||
        next.type === 'flow-collection'
      ) {
        if (depth + 1 > MAX_YAML_DEPTH) {
          throw new ValidationError(`parsing ${source}`, [
            {
              field: `${source}:${lineCounter.linePos(next.offset).line}`,
              message: `nested too deeply (limit ${MAX_YAML_DEPTH}): mappings and lists may nest at most ${MAX_YAML_DEPTH} levels`,
            },
          ]);
        }
        for (const item of next.items) {
          const key = 'key' in item ? item.key : undefined;
          stack.push({ token: key ?? undefined, depth: depth + 1 });
          stack.push({ token: item.value, depth: depth + 1 });
        }
      }
    }
  }
}

/** Field path of a node from the visitor's ancestors, e.g. `spec.ports[0].port`. */
function fieldPath(node: Node, ancestors: readonly (Document | Node | Pair)[]): string {
  let out = '';
  for (let i = 0; i < ancestors.length; i++) {
    const ancestor = ancestors[i];
    const child = ancestors[i + 1] ?? node;
    if (isSeq(ancestor)) {
      out += `[${ancestor.items.indexOf(child)}]`;
    } else if (isPair(ancestor) && ancestor.value === child) {
      const key = isScalar(ancestor.key) ? String(ancestor.key.value) : '?';
      out += out === '' ? key : `.${key}`;
    }
  }
  return out === '' ? '(document)' : out;
}

function isEmptyDocument(doc: Document.Parsed): boolean {
  const contents = doc.contents;
  return (
    contents === null || (isScalar(contents) && contents.value === null && contents.source === '')
  );
}

function describeYamlError(err: YAMLError): string {
  switch (err.code) {
    case 'DUPLICATE_KEY':
      return 'duplicate map key; each key may appear only once in a mapping';
    case 'TAG_RESOLVE_FAILED':
      return `${err.message}; only plain YAML 1.2 core values (strings, numbers, booleans, null, maps, lists) are allowed`;
    default:
      return `${err.message}; the file must be valid YAML 1.2`;
  }
}

/** Rejects YAML features that make manifests ambiguous: aliases, anchors, merge keys and non-string keys. */
function checkStrictNodes(
  doc: Document.Parsed,
  at: (offset: number | undefined) => string,
  problems: FieldProblem[],
): void {
  const start = (node: Node | null | undefined): number | undefined => node?.range?.[0];
  const checkAnchor = (node: Node): void => {
    if (!isAlias(node) && node.anchor !== undefined) {
      problems.push({
        field: at(start(node)),
        message: `anchor &${node.anchor} is not allowed; anchors and aliases are rejected`,
      });
    }
  };
  visit(doc, {
    Scalar(_, node: Scalar, ancestors) {
      checkAnchor(node);
      // 1e400 and .inf read as Infinity, which would later print as "null": say what it is.
      if (typeof node.value === 'number' && !Number.isFinite(node.value)) {
        problems.push({
          field: at(start(node)),
          message: `${fieldPath(node, ancestors)}: the number ${node.source ?? String(node.value)} is out of range; numbers must be finite (within about ±1.8e308): write a smaller number, or quote it to make it a string`,
        });
      }
    },
    Alias(_, node) {
      problems.push({
        field: at(start(node)),
        message: `alias *${node.source} is not allowed; write the value out in full`,
      });
    },
    Node(_, node) {
      checkAnchor(node);
    },
    Pair(_, pair: Pair<unknown, unknown>) {
      const key = pair.key;
      const offset = isNode(key) ? start(key) : start(pair.value as Node | null);
      if (!isScalar(key) || typeof key.value !== 'string') {
        problems.push({
          field: at(offset),
          message: 'map keys must be strings; quote keys such as numbers, booleans or null',
        });
      } else if (key.value === '<<') {
        problems.push({
          field: at(offset),
          message: 'merge keys (<<) are not allowed; write every field out in full',
        });
      }
    },
  });
}

const STRINGIFY_OPTIONS: ToStringOptions & { version: '1.1'; aliasDuplicateObjects: false } = {
  // YAML 1.1 quoting also protects strings such as "yes", "on" or "0777" for 1.1 readers (kubelet).
  version: '1.1',
  aliasDuplicateObjects: false,
  indent: 2,
  indentSeq: true,
  lineWidth: 0,
  minContentWidth: 0,
  defaultStringType: 'PLAIN',
  defaultKeyType: null,
  nullStr: 'null',
  trueStr: 'true',
  falseStr: 'false',
};

function compareKeys(a: Pair, b: Pair): number {
  const left = isScalar(a.key) ? String(a.key.value) : String(a.key);
  const right = isScalar(b.key) ? String(b.key.value) : String(b.key);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Serialises a JSON-like value as deterministic YAML: keys sorted by code unit at every level,
 * no anchors, no line folding, trailing newline. Equal input gives byte-identical output.
 */
export function stringifyCanonical(value: unknown): string {
  return stringify(toPlain(value, '$'), { ...STRINGIFY_OPTIONS, sortMapEntries: compareKeys });
}

/**
 * An upper bound, in UTF-8 bytes, of `stringifyCanonical(value)`, found without serialising it:
 * `validate` needs only to know a payload is under the agents' limit, and serialising the Pod
 * is the largest part of its work after parsing. The bound charges every node its line (the
 * indentation of its depth, a sequence dash, `: `, a newline) and every character of a key or
 * string the most the serialiser can spend on it: 10 bytes for an escape such as `\U0010FFFF`
 * in a double-quoted string, plus the indentation a line break in a block literal adds.
 */
export function yamlSizeBound(value: unknown): number {
  return nodeBound(value, 0);
}

function nodeBound(value: unknown, depth: number): number {
  const line = 2 * (depth + 2) + 16;
  if (typeof value === 'string') return line + stringBound(value, depth);
  if (value === null || typeof value === 'boolean') return line + 5;
  // A value stringifyCanonical refuses gets no bound, so the caller serialises and hears why.
  if (typeof value === 'number') return Number.isFinite(value) ? line + 24 : Infinity;
  if (typeof value !== 'object') return Infinity;
  let total = line;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) total += nodeBound(item, depth + 1);
    return total;
  }
  if (!isPlainPrototype(Object.getPrototypeOf(value))) return Infinity;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item !== undefined) total += stringBound(key, depth) + nodeBound(item, depth + 1);
  }
  return total;
}

function stringBound(text: string, depth: number): number {
  return 8 + text.length * (12 + 2 * (depth + 2));
}

/** Serialises a JSON-like value as YAML keeping the objects' key order (for human-edited files). */
export function stringifyOrdered(value: unknown): string {
  return stringify(toPlain(value, '$'), STRINGIFY_OPTIONS);
}

function toPlain(value: unknown, path: string): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') {
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new PodminError('INTERNAL', `serialising YAML: ${path} is not a finite number`);
    }
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item: unknown, index) => toPlain(item, `${path}[${index}]`));
  }
  if (typeof value === 'object' && isPlainPrototype(Object.getPrototypeOf(value))) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item !== undefined) {
        // defineProperty keeps a literal "__proto__" key as data instead of changing the prototype.
        Object.defineProperty(out, key, {
          value: toPlain(item, `${path}.${key}`),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return out;
  }
  throw new PodminError(
    'INTERNAL',
    `serialising YAML: ${path} is a ${typeof value}; only plain objects, arrays, strings, finite numbers, booleans and null are supported`,
  );
}

// Checked structurally rather than against Object.prototype so objects from another realm
// (structuredClone, vm contexts, jest sandboxes) still count as plain.
function isPlainPrototype(proto: unknown): boolean {
  return proto === null || Object.getPrototypeOf(proto) === null;
}
