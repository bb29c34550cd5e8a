import { PodminError } from '@podmin/util-errors';
import { parseYamlStream, stringifyCanonical, yamlSizeBound } from './yaml';
import { captureError } from './__fixtures__/capture-error';

describe('parseYamlStream', () => {
  it('parses every document of a stream and skips empty ones', () => {
    const text =
      '---\n# leading comment\n---\nkind: A\n---\n---\nkind: B\nlist: [1, "2", true, null]\n';
    expect(parseYamlStream(text, 'app.yaml')).toEqual([
      { kind: 'A' },
      { kind: 'B', list: [1, '2', true, null] },
    ]);
  });

  it('returns no documents for an empty or comment-only stream', () => {
    expect(parseYamlStream('', 'empty.yaml')).toEqual([]);
    expect(parseYamlStream('# nothing\n', 'empty.yaml')).toEqual([]);
  });

  it('keeps YAML 1.2 core semantics: yes/on are strings', () => {
    expect(parseYamlStream('a: yes\nb: on\nc: 0o17\n', 's.yaml')).toEqual([
      { a: 'yes', b: 'on', c: 15 },
    ]);
  });

  it('rejects duplicate keys with the file and line', () => {
    const err = captureError(() => parseYamlStream('a: 1\nb:\n  c: 1\n  c: 2\n', 'dup.yaml'));
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.problems).toEqual([
      { field: 'dup.yaml:4', message: expect.stringContaining('duplicate map key') },
    ]);
  });

  it('says a file is nested too deeply instead of overflowing the stack', () => {
    for (const text of [
      `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n',
      `${'- '.repeat(65)}x\n`,
    ]) {
      const err = captureError(() => parseYamlStream(text, 'deep.yaml'));
      expect(err.message).toMatch(
        /^parsing deep\.yaml: deep\.yaml:\d+: nested too deeply \(limit 64\)/,
      );
    }
    const ok = Array.from({ length: 63 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n';
    expect(parseYamlStream(ok, 'ok.yaml')).toHaveLength(1);
  });

  it('says a number beyond float range is out of range, naming where it is', () => {
    const err = captureError(() =>
      parseYamlStream('a:\n  - b: 1\n  - c: [1e400]\nd: -.inf\n', 'big.yaml'),
    );
    expect(err.problems).toEqual([
      {
        field: 'big.yaml:3',
        message: expect.stringMatching(/^a\[1\]\.c\[0\]: the number 1e400 is out of range/),
      },
      {
        field: 'big.yaml:4',
        message: expect.stringMatching(/^d: the number -\.inf is out of range/),
      },
    ]);
    expect(err.message).not.toContain('null');
  });

  it('still rejects anchors on scalars', () => {
    const err = captureError(() => parseYamlStream('a: &x 1\n', 'anchor.yaml'));
    expect(err.message).toContain('anchor &x is not allowed');
  });

  it('rejects merge keys', () => {
    const err = captureError(() => parseYamlStream('a:\n  <<: {b: 1}\n', 'merge.yaml'));
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.problems[0]?.field).toBe('merge.yaml:2');
    expect(err.message).toContain('merge keys (<<) are not allowed');
  });

  it('rejects non-string keys', () => {
    for (const text of ['1: a\n', 'true: a\n', 'null: a\n', '? [a]\n: b\n', '? {a: 1}\n: b\n']) {
      const err = captureError(() => parseYamlStream(text, 'keys.yaml'));
      expect(err.code).toBe('INVALID_MANIFEST');
      expect(err.message).toContain('keys.yaml:1');
      expect(err.message).toContain('map keys must be strings');
    }
  });

  it('accepts quoted scalar keys', () => {
    expect(parseYamlStream('"1": a\n\'true\': b\n', 'keys.yaml')).toEqual([
      { '1': 'a', true: 'b' },
    ]);
  });

  it('rejects anchors and aliases', () => {
    const err = captureError(() => parseYamlStream('a: &x {b: 1}\nc: *x\n', 'alias.yaml'));
    expect(err.problems.map((p) => p.field)).toEqual(['alias.yaml:1', 'alias.yaml:2']);
    expect(err.message).toContain('anchor &x is not allowed');
    expect(err.message).toContain('alias *x is not allowed');
  });

  it('rejects syntax errors and unresolved tags, naming the line', () => {
    const syntax = captureError(() => parseYamlStream('a: 1\nb: [1, 2\n', 'syntax.yaml'));
    expect(syntax.code).toBe('INVALID_MANIFEST');
    expect(syntax.problems[0]?.field).toMatch(/^syntax\.yaml:\d+$/);
    const tag = captureError(() => parseYamlStream('a: 1\n---\nb: !custom 2\n', 'tag.yaml'));
    expect(tag.problems[0]?.field).toBe('tag.yaml:3');
    expect(tag.message).toContain('only plain YAML 1.2 core values');
  });

  it('reports problems from every document at once', () => {
    const err = captureError(() => parseYamlStream('a: 1\na: 2\n---\nb: &x 1\n', 'multi.yaml'));
    expect(err.problems.map((p) => p.field)).toEqual(['multi.yaml:2', 'multi.yaml:4']);
  });
});

describe('stringifyCanonical', () => {
  const value = {
    spec: { z: 1, a: [{ y: 'b', x: 'a' }], '10': 'ten', '9': 'nine' },
    apiVersion: 'v1',
    metadata: { annotations: { 'b/x': 'yes', 'a/y': 'on', c: '0777', d: 'multi\nline', e: '' } },
    long: 'word '.repeat(50).trim(),
    dropped: undefined,
  };

  it('sorts keys recursively by code unit and quotes ambiguous strings', () => {
    expect(stringifyCanonical(value)).toBe(
      [
        'apiVersion: v1',
        `long: ${'word '.repeat(50).trim()}`,
        'metadata:',
        '  annotations:',
        '    a/y: "on"',
        '    b/x: "yes"',
        '    c: "0777"',
        '    d: |-',
        '      multi',
        '      line',
        '    e: ""',
        'spec:',
        '  "10": ten',
        '  "9": nine',
        '  a:',
        '    - x: a',
        '      "y": b',
        '  z: 1',
        '',
      ].join('\n'),
    );
  });

  it('is byte-stable regardless of input key order', () => {
    const reordered = {
      metadata: { annotations: { e: '', d: 'multi\nline', c: '0777', 'b/x': 'yes', 'a/y': 'on' } },
      long: 'word '.repeat(50).trim(),
      apiVersion: 'v1',
      spec: { '9': 'nine', '10': 'ten', a: [{ x: 'a', y: 'b' }], z: 1 },
    };
    expect(stringifyCanonical(reordered)).toBe(stringifyCanonical(value));
    expect(stringifyCanonical(value)).toBe(stringifyCanonical(structuredClone(value)));
  });

  it('round-trips through parseYamlStream', () => {
    expect(parseYamlStream(stringifyCanonical(value), 'c.yaml')).toEqual([
      {
        apiVersion: value.apiVersion,
        long: value.long,
        metadata: value.metadata,
        spec: value.spec,
      },
    ]);
  });

  it('never emits anchors for repeated objects and ends with a newline', () => {
    const shared = { a: 1 };
    const text = stringifyCanonical({ x: shared, y: shared });
    expect(text).toBe('x:\n  a: 1\n"y":\n  a: 1\n');
    expect(text).not.toContain('&');
  });

  it('keeps a literal __proto__ key as data', () => {
    const [parsed] = parseYamlStream('__proto__: {a: 1}\nb: 2\n', 'p.yaml');
    expect(stringifyCanonical(parsed)).toBe('__proto__:\n  a: 1\nb: 2\n');
  });

  it('rejects values that are not JSON-like', () => {
    for (const bad of [{ a: new Date(0) }, { a: Number.NaN }, { a: new Map() }, [() => 1]]) {
      let caught: unknown;
      try {
        stringifyCanonical(bad);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(PodminError);
      expect((caught as PodminError).code).toBe('INTERNAL');
    }
  });
});

describe('yamlSizeBound', () => {
  // A small deterministic generator (xorshift32), so a failure names a reproducible value.
  function generator(seed: number): () => number {
    let x = seed;
    return () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 0x100000000;
    };
  }
  // Characters that each force another YAML style: quotes, escapes, block literals, astral.
  const alphabet = [
    'a',
    'Z',
    '0',
    ' ',
    ':',
    '#',
    "'",
    '"',
    '\\',
    '\n',
    '\t',
    '\u0007',
    '\u00e9',
    '\u2028',
    '\ud83d\ude00',
    '-',
    '?',
    '&',
    '*',
    '{',
    '[',
    'yes',
    'null',
    '~',
  ];
  function text(rand: () => number): string {
    const length = Math.floor(rand() * 12);
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(rand() * alphabet.length)];
    return out;
  }
  function value(rand: () => number, depth: number): unknown {
    const pick = rand();
    if (depth > 6 || pick < 0.35) return text(rand);
    if (pick < 0.42) return Math.floor(rand() * 1e9) / (rand() < 0.5 ? 1 : 7);
    if (pick < 0.47) return rand() < 0.5;
    if (pick < 0.5) return null;
    if (pick < 0.75)
      return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * 4); i > 0; i--) out[text(rand)] = value(rand, depth + 1);
    return out;
  }

  it('is never below the bytes stringifyCanonical writes', () => {
    const rand = generator(0x9e3779b9);
    for (let i = 0; i < 3000; i++) {
      const v = value(rand, 0);
      const actual = Buffer.byteLength(stringifyCanonical(v));
      expect({ v, ok: yamlSizeBound(v) >= actual }).toEqual({ v, ok: true });
    }
  });

  it('holds for deep nesting and long multi-line strings', () => {
    let deep: unknown = 'x\n'.repeat(50);
    for (let i = 0; i < 60; i++) deep = i % 2 === 0 ? [deep] : { ['k\n' + i]: deep };
    expect(yamlSizeBound(deep)).toBeGreaterThanOrEqual(Buffer.byteLength(stringifyCanonical(deep)));
  });

  it('gives no bound for what stringifyCanonical refuses', () => {
    expect(yamlSizeBound({ a: Infinity })).toBe(Infinity);
    expect(yamlSizeBound([undefined])).toBe(Infinity);
    expect(yamlSizeBound({ when: new Date(0) })).toBe(Infinity);
  });
});
