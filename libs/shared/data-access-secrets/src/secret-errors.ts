import { PodminError } from '@podmin/util-errors';

/** The original error as `cause`, or nothing (a store that finds the fact itself has none). */
function causeOf(cause: unknown): { cause?: unknown } {
  return cause === undefined ? {} : { cause };
}

/** NOT_FOUND for a missing `thing` (the store's word: parameter, secret), with the hint. */
export function secretNotFoundError(doing: string, thing: string, cause?: unknown): PodminError {
  return new PodminError('NOT_FOUND', `${doing}: no such ${thing}`, {
    ...causeOf(cause),
    hint: 'check the key, --for, --namespace and --provider; `podmin secret list` shows what exists',
  });
}

/** ALREADY_EXISTS for a `thing` (parameter, secret) that create found, with the hint. */
export function secretExistsError(doing: string, thing: string, cause?: unknown): PodminError {
  return new PodminError('ALREADY_EXISTS', `${doing}: the ${thing} already exists`, {
    ...causeOf(cause),
    hint: 'use `podmin secret update` to change its value',
  });
}
