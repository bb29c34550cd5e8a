import { PassThrough } from 'node:stream';
import { PodminError } from '@podmin/util-errors';
import { formatError, renderTable } from './format';
import { TerminalReporter } from './terminal-reporter';

describe('renderTable', () => {
  it('aligns columns under their headers', () => {
    expect(
      renderTable(
        ['NAME', 'NS'],
        [
          ['web', 'default'],
          ['database', 'product'],
        ],
      ),
    ).toBe('NAME       NS\nweb        default\ndatabase   product\n');
  });
});

describe('formatError', () => {
  it('prints message, cause and hint without a stack', () => {
    const err = new PodminError('IO_ERROR', 'writing config', {
      cause: new Error('EACCES'),
      hint: 'check permissions',
    });
    const text = formatError(err, false);
    expect(text).toBe('Error: writing config\nCaused by: EACCES\nHint: check permissions\n');
    expect(formatError(err, true)).toContain('at ');
  });

  it('escapes control characters of message, cause and hint', () => {
    const err = new PodminError('INVALID_ARGUMENT', 'reading a\u0000b:\n  - c\u001b[2J', {
      cause: new Error('line\nforged'),
      hint: 'use \u0007',
    });
    expect(formatError(err, false)).toBe(
      'Error: reading a\\x00b:\n  - c\\x1b[2J\nCaused by: line\\x0aforged\nHint: use \\x07\n',
    );
  });

  it('marks unexpected errors and offers --debug', () => {
    expect(formatError(new TypeError('x is undefined'), false)).toContain('--debug');
  });
});

describe('TerminalReporter', () => {
  it('writes results to stdout and status to stderr', () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const reporter = new TerminalReporter({ stdout, stderr, stdin: new PassThrough() });
    reporter.info('connecting');
    reporter.result('ref');
    reporter.warn('careful');
    expect(String(stdout.read())).toBe('ref\n');
    expect(String(stderr.read())).toBe('connecting\nWarning: careful\n');
  });

  it('escapes control characters in status lines', () => {
    const stderr = new PassThrough();
    const reporter = new TerminalReporter({
      stdout: new PassThrough(),
      stderr,
      stdin: new PassThrough(),
    });
    reporter.warn('selector app=\u001b[31mred');
    expect(String(stderr.read())).toBe('Warning: selector app=\\x1b[31mred\n');
  });

  it('refuses to confirm without a terminal', async () => {
    const reporter = new TerminalReporter({
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      stdin: new PassThrough(),
    });
    await expect(reporter.confirm('destroy?')).resolves.toBe(false);
  });
});
