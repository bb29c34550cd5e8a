import type { FieldProblem } from '@podmin/util-errors';
import { DNS1123_LABEL_RULE, isDns1123Label, isLabelValue, isQualifiedName } from './names';

/** Collects problems for one object kind, prefixing every field path (e.g. `DaemonSet spec.selector`). */
export class ProblemSink {
  constructor(
    readonly problems: FieldProblem[],
    private readonly prefix: string,
  ) {}

  /** Records `message` against the field at `path`. */
  add(path: string, message: string): void {
    this.problems.push({ field: `${this.prefix} ${path}`, message });
  }
}

/** True for a YAML mapping (a plain object, not an array or null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Appends a map-entry segment to a field path: `metadata.labels["app"]`. */
export function entryPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** Joins a child field to a path, tolerating an empty root. */
export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Reports every key of `obj` outside `allowed`; `reason` says what is allowed. */
export function checkKeys(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  sink: ProblemSink,
  reason = `is not supported; allowed fields here are: ${allowed.join(', ')}`,
): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      sink.add(childPath(path, key), reason);
    }
  }
}

/** Returns `value` as a mapping, or records that one was expected. */
export function expectRecord(
  value: unknown,
  path: string,
  sink: ProblemSink,
): Record<string, unknown> | undefined {
  if (isRecord(value)) {
    return value;
  }
  sink.add(path, `must be a mapping, not ${describeType(value)}`);
  return undefined;
}

/** Returns `value` as a list, or records that one was expected. */
export function expectList(value: unknown, path: string, sink: ProblemSink): unknown[] | undefined {
  if (Array.isArray(value)) {
    return value as unknown[];
  }
  sink.add(path, `must be a list, not ${describeType(value)}`);
  return undefined;
}

/** Short human description of a YAML value's type for messages. */
export function describeType(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'a list';
  }
  if (typeof value === 'object') {
    return 'a mapping';
  }
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

/** Returns a DNS-1123 label string, or records what is allowed. */
export function expectDnsLabel(
  value: unknown,
  path: string,
  sink: ProblemSink,
): string | undefined {
  if (typeof value === 'string' && isDns1123Label(value)) {
    return value;
  }
  sink.add(
    path,
    typeof value === 'string'
      ? `"${value}" is invalid; it must be ${DNS1123_LABEL_RULE}`
      : `must be a string: ${DNS1123_LABEL_RULE}`,
  );
  return undefined;
}

/** Kind of string map being checked, which decides the key and value rules. */
export type StringMapKind = 'labels' | 'annotations' | 'selector';

/** Returns `value` as a string→string map, checking label/annotation key and value syntax. */
export function expectStringMap(
  value: unknown,
  path: string,
  sink: ProblemSink,
  kind: StringMapKind,
): Record<string, string> | undefined {
  const map = expectRecord(value, path, sink);
  if (map === undefined) {
    return undefined;
  }
  const out: Record<string, string> = {};
  let valid = true;
  for (const [key, item] of Object.entries(map)) {
    const field = entryPath(path, key);
    if (!isQualifiedName(key)) {
      sink.add(
        field,
        'key must be a qualified name: an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
      );
      valid = false;
    }
    if (typeof item !== 'string') {
      sink.add(field, `must be a string, not ${describeType(item)}; quote the value`);
      valid = false;
      continue;
    }
    if (kind !== 'annotations' && !isLabelValue(item)) {
      sink.add(
        field,
        `value "${item}" is invalid; label values are empty or at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit`,
      );
      valid = false;
    }
    Object.defineProperty(out, key, {
      value: item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return valid ? out : undefined;
}

/** Returns an integer within [min, max], or records the allowed range. */
export function expectInteger(
  value: unknown,
  path: string,
  sink: ProblemSink,
  min: number,
  max: number,
): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) {
    return value;
  }
  sink.add(path, `must be an integer from ${min} through ${max}, not ${describeType(value)}`);
  return undefined;
}

/** Normalises a container path for prefix comparison (collapses repeated and trailing slashes). */
export function normalizePath(path: string): string {
  const trimmed = path.replace(/\/+/g, '/').replace(/\/$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** True when `a` equals `b` or one is a parent directory of the other. */
export function pathsOverlap(a: string, b: string): boolean {
  const left = normalizePath(a);
  const right = normalizePath(b);
  const within = (inner: string, outer: string): boolean =>
    inner === outer || outer === '/' || inner.startsWith(`${outer}/`);
  return within(left, right) || within(right, left);
}

/** Structural equality of JSON-like values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => deepEqual(item, b[index]))
    );
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(a[key], b[key]))
    );
  }
  return false;
}
