import { PodminError } from '@podmin/util-errors';
import { assertOtelHeaders } from './otel-headers';

function messageOf(value: string): string | undefined {
  try {
    assertOtelHeaders(Buffer.from(value));
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(PodminError);
    expect((err as PodminError).code).toBe('INVALID_ARGUMENT');
    return (err as Error).message;
  }
}

describe('assertOtelHeaders', () => {
  it('accepts a JSON object of header names to strings', () => {
    expect(messageOf('{"authorization":"Bearer s3cret","x-scope":"team a"}')).toBeUndefined();
  });

  it.each([
    ['not JSON', '{authorization: s3cret', 'not valid JSON'],
    ['an array', '["s3cret"]', 'must be a JSON object'],
    ['a string', '"s3cret"', 'must be a JSON object'],
    ['empty', '{}', 'no headers'],
    ['a number value', '{"x-n":12345}', 'must be a string'],
    ['a duplicate name', '{"a":"s3cret","a":"s3cret2"}', 'more than once'],
    ['a CRLF in a value', '{"a":"s3cret\\r\\nInjected: 1"}', 'control characters'],
    ['a bad header name', '{"bad name":"s3cret"}', 'not a valid HTTP header name'],
  ])('rejects %s without quoting the value', (_label, value, why) => {
    const message = messageOf(value);
    expect(message).toContain(why);
    expect(message).not.toContain('s3cret');
  });
});
