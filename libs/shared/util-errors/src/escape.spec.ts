import { escapeControlCharacters } from './escape';
import { ValidationError } from './podmin-error';

describe('escapeControlCharacters', () => {
  it('escapes NUL, ESC, DEL, C1 and bidirectional controls, keeping other text', () => {
    expect(escapeControlCharacters('a\u0000b\u001b[2Jc\u007fd\u0085e\u202ef — ü')).toBe(
      'a\\x00b\\x1b[2Jc\\x7fd\\x85e\\u202ef — ü',
    );
  });

  it('escapes newlines unless asked to keep them', () => {
    expect(escapeControlCharacters('a\nb\tc\r')).toBe('a\\x0ab\\x09c\\x0d');
    expect(escapeControlCharacters('a\nb\r', { keepNewlines: true })).toBe('a\nb\\x0d');
  });

  it('keeps each validation problem on one line', () => {
    const err = new ValidationError('validating x', [
      { field: 'metadata.name', message: '"w\u0000\neb" is invalid' },
      { field: 'b', message: 'ok' },
    ]);
    expect(err.message).toBe(
      'validating x:\n  - metadata.name: "w\\x00\\x0aeb" is invalid\n  - b: ok',
    );
  });
});
