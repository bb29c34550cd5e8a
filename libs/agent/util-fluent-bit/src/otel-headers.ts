import { PodminError } from '@podmin/util-errors';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space, tab and non-ASCII: never CR, LF or another control that could split a
// header or the generated configuration.
const HEADER_VALUE = /^[\t\x20-\x7e\u0080-\uffff]*$/;

/**
 * Reads the exporter headers secret: a JSON object of HTTP header names to string values.
 * Anything else is refused naming `secretName` and the offending header, never a value. `${`
 * is refused too: Fluent Bit expands `${VAR}` in every configuration value, so such a value
 * would not reach the collector as stored.
 */
export function parseOtelHeaders(value: Buffer, secretName: string): Record<string, string> {
  const fail = (why: string): never => {
    throw new PodminError('INVALID_ARGUMENT', `reading ${secretName}: ${why}`, {
      hint: 'store a JSON object of header names to string values with `podmin secret update otel-logs-headers --system`',
    });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    // The SyntaxError would quote the secret, so it is not kept as the cause.
    return fail('the value is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail('the value must be a JSON object of header names to strings');
  }
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, headerValue] of Object.entries(parsed as Record<string, unknown>)) {
    if (!HEADER_NAME.test(name)) fail(`${JSON.stringify(name)} is not an HTTP header name`);
    if (seen.has(name.toLowerCase())) fail(`the header ${name} appears more than once`);
    seen.add(name.toLowerCase());
    if (typeof headerValue !== 'string') return fail(`the value of ${name} must be a string`);
    if (!HEADER_VALUE.test(headerValue)) fail(`the value of ${name} contains control characters`);
    if (headerValue.includes('${')) {
      fail(`the value of ${name} contains "\${", which Fluent Bit would expand`);
    }
    headers[name] = headerValue;
  }
  return headers;
}
