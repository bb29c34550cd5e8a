import { ValidationError } from '@podmin/util-errors';

/** The ValidationError `fn` throws; fails the test when it throws nothing or something else. */
export function captureError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) {
      return err;
    }
    throw err;
  }
  throw new Error('expected a ValidationError');
}
