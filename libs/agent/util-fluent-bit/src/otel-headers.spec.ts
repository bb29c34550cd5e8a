import { parseOtelHeaders } from './otel-headers';

const NAME = '/prod/_system/otel-logs-headers';
const parse = (text: string) => parseOtelHeaders(Buffer.from(text), NAME);

describe('parseOtelHeaders', () => {
  it('reads a JSON object of header names to strings', () => {
    expect(parse('{"authorization":"Bearer abc","x-scope-orgid":"tenant-1"}')).toEqual({
      authorization: 'Bearer abc',
      'x-scope-orgid': 'tenant-1',
    });
  });

  it.each([
    ['"just a string"', 'must be a JSON object'],
    ['["a","b"]', 'must be a JSON object'],
    ['null', 'must be a JSON object'],
    ['{"a": 1}', 'the value of a must be a string'],
    ['{"bad name": "x"}', '"bad name" is not an HTTP header name'],
    ['{"a": "x\\r\\nInjected: y"}', 'the value of a contains control characters'],
    ['{"a": "x", "A": "y"}', 'the header A appears more than once'],
    ['{"a": "pre${HOME}"}', 'which Fluent Bit would expand'],
    ['{not json', 'is not valid JSON'],
  ])('refuses %s naming the secret and never the value', (text, why) => {
    let message = '';
    try {
      parse(text);
    } catch (err) {
      message = (err as Error).message;
      expect((err as { code?: string }).code).toBe('INVALID_ARGUMENT');
    }
    expect(message).toContain(`reading ${NAME}: `);
    expect(message).toContain(why);
    expect(message).not.toContain('Injected');
    expect(message).not.toContain('HOME');
  });
});
