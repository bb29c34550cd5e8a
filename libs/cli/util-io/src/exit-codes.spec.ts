import { PodminError } from '@podmin/util-errors';
import { EXIT_FAILURE, EXIT_USAGE, UsageError, exitCodeFor } from './exit-codes';

describe('exitCodeFor', () => {
  it('exits 2 for an invocation error and 1 for any other failure', () => {
    expect(exitCodeFor(new UsageError('Unknown argument: bogus'))).toBe(EXIT_USAGE);
    expect(EXIT_USAGE).toBe(2);
    expect(exitCodeFor(new PodminError('INVALID_ARGUMENT', 'reading config.json: bad'))).toBe(
      EXIT_FAILURE,
    );
    expect(exitCodeFor(new PodminError('NOT_FOUND', 'status web: no such deployment'))).toBe(1);
    expect(exitCodeFor(new Error('boom'))).toBe(1);
    expect(exitCodeFor('thrown string')).toBe(1);
  });

  it('keeps the code, hint and whether usage is shown', () => {
    const err = new UsageError('Unknown command "x"', { hint: 'see --help', showUsage: false });
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.fault).toBe('user');
    expect(err.hint).toBe('see --help');
    expect(err.showUsage).toBe(false);
    expect(new UsageError('Missing required argument: nodegroup').showUsage).toBe(true);
  });
});
