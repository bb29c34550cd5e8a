import { PodminError } from '@podmin/util-errors';

/** The PodminError `run` throws synchronously; fails the test when it accepts or throws else. */
export function thrownPodminError(run: () => unknown): PodminError {
  try {
    run();
  } catch (err) {
    if (err instanceof PodminError) return err;
    throw err;
  }
  throw new Error('accepted');
}
