import { canonicalJson } from './canonical-json';
import { findDuplicateKey, parseStrictJson } from './strict-json';

const parse = (text: string | Buffer, maxBytes = 1024) =>
  parseStrictJson(text, 'doc', { maxBytes, maxDepth: 4 });

describe('parseStrictJson', () => {
  it('parses what JSON.parse parses', () => {
    const text = '{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"],"b":{}}';
    expect(parse(text)).toEqual(JSON.parse(text));
    expect(parse(' [ ] ')).toEqual([]);
  });

  it('rejects duplicate keys, trailing data, bad UTF-8, depth and size', () => {
    expect(() => parse('{"a":1,"a":2}')).toThrow(/duplicate key "a"/);
    expect(() => parse('{"a":1} x')).toThrow(/trailing data/);
    expect(() => parse('{"a":01}')).toThrow(/expected/);
    expect(() => parse(Buffer.from([0x22, 0xff, 0x22]))).toThrow(/UTF-8/);
    expect(() => parse('[[[[[1]]]]]')).toThrow(/nesting deeper than 4/);
    expect(() => parse('"1234"', 5)).toThrow(/over the 5-byte limit/);
    expect(() => parse('"a\u0001"')).toThrow(/invalid string/);
    expect(() => parse('')).toThrow(/unexpected character/);
  });

  it('keeps __proto__ an ordinary key', () => {
    const value = parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[{"y":2,"z":1}]},"b":1}',
    );
  });
});

describe('findDuplicateKey', () => {
  it('names the first key repeated within one object, at any depth, in document order', () => {
    expect(findDuplicateKey('{"a":1,"b":{"c":1,"c":2},"a":3}')).toBe('c');
    expect(findDuplicateKey('{"a":[{"x":1},{"x":2}],"b":{"x":1}}')).toBeUndefined();
    expect(findDuplicateKey('{"\\u0061":1,"a":2}')).toBe('a');
  });

  it('is undefined for text that is not JSON (readers check that first)', () => {
    expect(findDuplicateKey('{"a":1,"b"')).toBeUndefined();
  });
});
