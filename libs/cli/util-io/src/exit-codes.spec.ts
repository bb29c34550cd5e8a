import { PodminError, ValidationError } from '@podmin/util-errors';
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

  it('exits 2 for a library’s check of flag values, 1 when any problem is about other input', () => {
    const flags = new ValidationError(
      'invalid arguments',
      [
        { field: '--cpu', message: '"lots" is not a positive Kubernetes quantity' },
        { field: '<name>', message: '"Bad_Name" must be a DNS-1123 label' },
        { field: '--image[1]', message: 'bad reference' },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
    expect(exitCodeFor(flags)).toBe(EXIT_USAGE);
    const bucket = new ValidationError(
      'reading deployments/index.json',
      [{ field: 'key "x"', message: 'must be <nodegroup>/<deployment>' }],
      { code: 'INVALID_ARGUMENT' },
    );
    expect(exitCodeFor(bucket)).toBe(EXIT_FAILURE);
    const mixed = new ValidationError(
      'deploy',
      [
        { field: '--cpu', message: 'bad' },
        { field: 'spec.template', message: 'bad' },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
    expect(exitCodeFor(mixed)).toBe(EXIT_FAILURE);
    // A manifest's problems are the operation failing on its input file, not the invocation.
    const manifest = new ValidationError('daemonset.yaml', [{ field: '--x', message: 'bad' }]);
    expect(exitCodeFor(manifest)).toBe(EXIT_FAILURE);
    expect(exitCodeFor(new ValidationError('x', [], { code: 'INVALID_ARGUMENT' }))).toBe(1);
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
