import { PodminError, ValidationError, hasCode } from './podmin-error';

describe('PodminError', () => {
  it('defaults fault by code and keeps cause and hint', () => {
    const cause = new Error('disk full');
    const err = new PodminError('IO_ERROR', 'writing config: disk full', {
      cause,
      hint: 'free space',
    });
    expect(err.fault).toBe('system');
    expect(err.cause).toBe(cause);
    expect(err.hint).toBe('free space');
    expect(err.name).toBe('PodminError');
    expect(new PodminError('INVALID_ARGUMENT', 'x').fault).toBe('user');
  });

  it('lists every validation problem with its field', () => {
    const err = new ValidationError('validating daemonset.yaml', [
      { field: 'metadata.name', message: 'is required' },
      { field: 'spec.selector', message: 'must be a map' },
    ]);
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.message).toContain('metadata.name: is required');
    expect(err.message).toContain('spec.selector: must be a map');
    expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
    expect(hasCode(err, 'NOT_FOUND')).toBe(false);
  });
});
