import { PodminError, ValidationError, type PodminErrorOptions } from '@podmin/util-errors';

/** The command did what it was asked. */
export const EXIT_OK = 0;
/** The operation failed: the cluster, the bucket, the files or the state it read said no. */
export const EXIT_FAILURE = 1;
/**
 * The invocation itself is wrong (unknown command or flag, bad value, missing argument), so
 * running it again unchanged cannot succeed; the same code podmin-agent exits with for bad flags.
 */
export const EXIT_USAGE = 2;

/** One of the CLI's exit codes. */
export type ExitCode = typeof EXIT_OK | typeof EXIT_FAILURE | typeof EXIT_USAGE;

/**
 * An invocation error: a command, flag or value the CLI does not accept. The CLI shows it
 * (with the usage when `showUsage`) and exits {@link EXIT_USAGE}.
 */
export class UsageError extends PodminError {
  /** Whether the command's usage is worth printing with it (not for an unknown command). */
  readonly showUsage: boolean;

  constructor(message: string, options: PodminErrorOptions & { showUsage?: boolean } = {}) {
    super('INVALID_ARGUMENT', message, options);
    this.showUsage = options.showUsage ?? true;
  }
}

/** A problem's field named as the CLI names its input: a flag (`--cpu`) or an argument (`<name>`). */
const INVOCATION_FIELD = /^(?:--[a-z][a-z0-9-]*|<[a-z][a-z0-9-]*>)(?![a-z0-9-])/;

/**
 * Whether an error is about the invocation: a {@link UsageError}, or a validation error (from a
 * feature library's checks of flag values) whose every problem names a flag or an argument.
 */
export function isUsageError(err: unknown): boolean {
  if (err instanceof UsageError) return true;
  return (
    err instanceof ValidationError &&
    err.code === 'INVALID_ARGUMENT' &&
    err.problems.length > 0 &&
    err.problems.every((p) => INVOCATION_FIELD.test(p.field))
  );
}

/** The exit code for an error a command ended with: usage errors 2, everything else 1. */
export function exitCodeFor(err: unknown): ExitCode {
  return isUsageError(err) ? EXIT_USAGE : EXIT_FAILURE;
}
