/**
 * Serialises `value` as deterministic JSON: object keys sorted by code unit, no whitespace,
 * `undefined` members omitted. Use it for every document that is stored or hashed.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** {@link canonicalJson} as UTF-8 bytes, ready to hash or upload. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((item: unknown) => (item === undefined ? null : sortKeys(item)));
  }
  if (typeof value === 'object' && value !== null) {
    const source = value as Record<string, unknown>;
    // A null-prototype object keeps a "__proto__" key an ordinary member.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(source).sort()) {
      const member = source[key];
      if (member !== undefined) {
        sorted[key] = sortKeys(member);
      }
    }
    return sorted;
  }
  return value;
}
