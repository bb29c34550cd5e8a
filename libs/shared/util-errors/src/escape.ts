/**
 * True for C0 and C1 controls, DEL, and the bidirectional marks, overrides and isolates that
 * can make a terminal show text other than what was received.
 */
function isUnsafe(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function escapeCode(code: number): string {
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Escapes control characters (NUL, ESC, newlines, DEL, C1 and bidirectional controls) as
 * `\xNN`/`\uNNNN`, so text echoed from input cannot rewrite a terminal or forge lines.
 * With `keepNewlines`, `\n` stays (for messages that are multi-line by construction).
 */
export function escapeControlCharacters(
  text: string,
  options: { keepNewlines?: boolean } = {},
): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out +=
      isUnsafe(code) && !(code === 0x0a && options.keepNewlines === true)
        ? escapeCode(code)
        : text.charAt(i);
  }
  return out;
}
