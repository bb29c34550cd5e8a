import { PodminError } from '@podmin/util-errors';
import { DegradedPassError } from './reconcile-outcome';
import { degradedPassError, stagingFault } from './staging-faults';

describe('degradedPassError', () => {
  const result = { status: 'unchanged' } as const;

  it('keeps the one fault code and cause, and describes each deployment', () => {
    const cause = new PodminError('OBJECT_NOT_FOUND', 'reading payload: gone');
    const err = degradedPassError('workers', [stagingFault('workers/web', cause, true)], result);
    expect(err).toBeInstanceOf(DegradedPassError);
    expect(err.code).toBe('OBJECT_NOT_FOUND');
    expect(err.cause).toBe(cause);
    expect(err.result).toBe(result);
    expect(err.faults).toEqual([
      { deployment: 'workers/web', error: 'reading payload: gone', kept: true },
    ]);
    expect(err.message).toBe(
      'staging NodeGroup workers: deployment workers/web keeps its last published Pod: reading payload: gone',
    );
  });

  it('reports SERVICE_UNAVAILABLE without a cause when the faults differ', () => {
    const err = degradedPassError(
      'workers',
      [
        stagingFault('workers/a', new PodminError('OBJECT_NOT_FOUND', 'gone'), true),
        stagingFault('workers/b', 'not an Error', false),
      ],
      result,
    );
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.cause).toBeUndefined();
    expect(err.message).toBe(
      'staging NodeGroup workers: deployment workers/a keeps its last published Pod: gone; deployment workers/b is not published: not an Error',
    );
  });
});
