import { ServiceOwnedError, parseServiceKey, type IndexEntry } from './desired-index';
import { DNS_LABEL } from './key-patterns';

/** One entry changed in canonical index text by {@link editCanonicalIndex}. */
export interface IndexEdit {
  /** The entry the key held before the edit; undefined when it held none. */
  previous: IndexEntry | undefined;
  /** The edited canonical text; undefined when the text already says this (nothing to write). */
  text: string | undefined;
}

// A JSON string's characters that stand for themselves: no quote, backslash or control character.
const PLAIN = '[^"\\\\/\\x00-\\x1f]+';
// One entry exactly as serializeIndex writes it (two-space JSON): a valid deployment key, a Pod
// payload key of that key's NodeGroup (the back-reference), an optional Service payload key.
// Captures: NodeGroup, deployment, and the Service's namespace and name when there is one.
const ENTRY = new RegExp(
  `  "(${DNS_LABEL})\\/(${DNS_LABEL})": \\{\\n` +
    `    "pod": "nodegroups\\/\\1\\/pods\\/sha512\\/[0-9a-f]{128}\\.yaml"` +
    `(?:,\\n    "service": "services\\/(${PLAIN})\\/(${PLAIN})\\/sha512\\/[0-9a-f]{128}\\.yaml")?` +
    `\\n  \\}`,
  'y',
);
const EMPTY = '{}\n';
const HEAD = '{\n';
const SEPARATOR = ',\n';
const TAIL = '\n}\n';

/** The entry's lines as serializeIndex writes them, without separator. */
function renderEntry(key: string, entry: IndexEntry): string {
  const service =
    entry.service === undefined ? '' : `,\n    "service": ${JSON.stringify(entry.service)}`;
  return `  ${JSON.stringify(key)}: {\n    "pod": ${JSON.stringify(entry.pod)}${service}\n  }`;
}

/**
 * Sets `key` to `entry` (or removes it, for null) in index text that is exactly what
 * serializeIndex writes, without building the index: the result is byte for byte
 * `serializeIndex(withDeployment(parseIndex(text), key, entry))` (or withoutDeployment), at a
 * fraction of the cost on a large index. One anchored pattern checks every entry as strictly as
 * parseIndex does, and strictly ascending keys rule out duplicates.
 *
 * Returns undefined when the text is not in that form (another tool's formatting, escapes, an
 * index parseIndex would reject) or when the new entry would not be: the caller then takes the
 * parsed path, which accepts or names the problem. Throws {@link ServiceOwnedError} where
 * withDeployment would.
 */
export function editCanonicalIndex(
  text: string,
  key: string,
  entry: IndexEntry | null,
): IndexEdit | undefined {
  // Service identity → owning key, and where the key is or would go.
  const owners = new Map<string, string>();
  let found: { start: number; end: number } | undefined;
  let insertAt = -1;
  let lastEnd = -1;
  if (text !== EMPTY) {
    if (!text.startsWith(HEAD)) return undefined;
    let previousKey = '';
    for (let pos = HEAD.length; ;) {
      ENTRY.lastIndex = pos;
      const m = ENTRY.exec(text);
      if (m === null) return undefined;
      const current = `${m[1]}/${m[2]}`;
      if (current <= previousKey) return undefined;
      previousKey = current;
      if (m[3] !== undefined) {
        const identity = `${m[3]}/${m[4]}`;
        if (owners.has(identity)) return undefined;
        owners.set(identity, current);
      }
      const end = ENTRY.lastIndex;
      if (current === key) found = { start: pos, end };
      else if (insertAt === -1 && current > key) insertAt = pos;
      if (text.startsWith(SEPARATOR, end)) {
        pos = end + SEPARATOR.length;
        continue;
      }
      if (end + TAIL.length !== text.length || !text.endsWith(TAIL)) return undefined;
      lastEnd = end;
      break;
    }
  }
  const previous = found === undefined ? undefined : entryAt(text, key, found);
  if (entry === null) {
    if (found === undefined) return { previous, text: undefined };
    if (found.start === HEAD.length && found.end === lastEnd) return { previous, text: EMPTY };
    // Not the last entry: drop it with the separator after it; the last: with the one before.
    return found.end === lastEnd
      ? { previous, text: text.slice(0, found.start - SEPARATOR.length) + text.slice(found.end) }
      : { previous, text: text.slice(0, found.start) + text.slice(found.end + SEPARATOR.length) };
  }
  if (previous !== undefined && previous.pod === entry.pod && previous.service === entry.service)
    return { previous, text: undefined };
  if (entry.service !== undefined) {
    const svc = parseServiceKey(entry.service);
    const owner = svc && owners.get(`${svc.namespace}/${svc.service}`);
    if (svc && owner !== undefined && owner !== key)
      throw new ServiceOwnedError(`${svc.namespace}/${svc.service}`, owner);
  }
  const block = renderEntry(key, entry);
  ENTRY.lastIndex = 0;
  const own = ENTRY.exec(block);
  if (own === null || ENTRY.lastIndex !== block.length || `${own[1]}/${own[2]}` !== key)
    return undefined;
  let next: string;
  if (found !== undefined) next = text.slice(0, found.start) + block + text.slice(found.end);
  else if (text === EMPTY) next = HEAD + block + TAIL;
  else if (insertAt !== -1)
    next = text.slice(0, insertAt) + block + SEPARATOR + text.slice(insertAt);
  else next = text.slice(0, lastEnd) + SEPARATOR + block + text.slice(lastEnd);
  return { previous, text: next };
}

/** The entry of `key` from its checked lines. */
function entryAt(text: string, key: string, at: { start: number; end: number }): IndexEntry {
  const parsed = (JSON.parse(`{${text.slice(at.start, at.end)}}`) as Record<string, IndexEntry>)[
    key
  ] as IndexEntry;
  return parsed.service === undefined
    ? { pod: parsed.pod }
    : { pod: parsed.pod, service: parsed.service };
}
