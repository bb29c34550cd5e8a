import { parseDocument } from 'yaml';
import { PodminError } from '@podmin/util-errors';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space, tab and non-ASCII bytes; never CR, LF or other controls that could
// split the generated collector configuration.
const HEADER_VALUE = /^[\t\x20-\x7e\u0080-\uffff]*$/;

/**
 * Checks the `otel-logs-headers` value: a JSON object mapping HTTP header names to string
 * values, without duplicate names or control characters. The message never quotes a value.
 */
export function assertOtelHeaders(value: Buffer): void {
  const fail = (why: string): never => {
    throw new PodminError('INVALID_ARGUMENT', `checking otel-logs-headers: ${why}`, {
      hint: 'provide a JSON object of header names to string values, e.g. {"authorization":"Bearer …"}',
    });
  };
  const text = value.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The SyntaxError would quote the secret, so it is not kept as the cause.
    return fail('the value is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail('the value must be a JSON object');
  }
  // JSON.parse keeps the last of duplicate names silently; the yaml parser reports them.
  if (parseDocument(text, { uniqueKeys: true }).errors.some((e) => e.code === 'DUPLICATE_KEY')) {
    return fail('a header name appears more than once');
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) fail('the object has no headers');
  for (const [name, headerValue] of entries) {
    if (!HEADER_NAME.test(name)) fail(`${JSON.stringify(name)} is not a valid HTTP header name`);
    if (typeof headerValue !== 'string') fail(`the value of ${name} must be a string`);
    else if (!HEADER_VALUE.test(headerValue)) {
      fail(`the value of ${name} contains control characters`);
    }
  }
}
