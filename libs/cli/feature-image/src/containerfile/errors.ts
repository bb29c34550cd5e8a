import { PodminError } from '@podmin/util-errors';
import type { PodminErrorOptions } from '@podmin/util-errors';

/** A Containerfile problem, located by file and 1-based line number. */
export class ContainerfileError extends PodminError {
  constructor(
    readonly file: string,
    readonly line: number,
    why: string,
    options: PodminErrorOptions = {},
  ) {
    super('INVALID_ARGUMENT', `building from ${file} line ${line}: ${why}`, options);
  }
}
