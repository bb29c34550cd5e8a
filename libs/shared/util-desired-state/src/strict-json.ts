// JSON.parse keeps the last of duplicate keys silently; a strict reader must refuse them.
// No JSON library in the dependency set reports duplicates, so this small scanner does.

/** The first object key that appears twice in one object of `text` (valid JSON), or undefined. */
export function findDuplicateKey(text: string): string | undefined {
  const stack: Array<Set<string> | null> = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '{') {
      stack.push(new Set());
      expectKey = true;
      i++;
    } else if (ch === '[') {
      stack.push(null);
      expectKey = false;
      i++;
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      i++;
    } else if (ch === ',') {
      expectKey = stack[stack.length - 1] instanceof Set;
      i++;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const literal = text.slice(i, j + 1);
      const keys = stack[stack.length - 1];
      if (expectKey && keys) {
        const key = JSON.parse(literal) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = j + 1;
    } else {
      i++;
    }
  }
  return undefined;
}
