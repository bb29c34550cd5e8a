import { escapeControlCharacters } from './escape';

/** Who is at fault for an error: the operator's input, or the system/environment. */
export type ErrorFault = 'user' | 'system';

/** Every error code, for checking a code that crossed a process boundary. */
export const PODMIN_ERROR_CODES = [
  'INVALID_ARGUMENT',
  'INVALID_MANIFEST',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'OBJECT_NOT_FOUND',
  'PRECONDITION_FAILED',
  'CONFLICT',
  'OBJECT_TOO_LARGE',
  'ACCESS_DENIED',
  'BUCKET_UNAVAILABLE',
  'SERVICE_UNAVAILABLE',
  'CONFLICT_RETRIES_EXHAUSTED',
  'NO_CONTEXT',
  'CONTEXT_NOT_FOUND',
  'CONFIG_INVALID',
  'IO_ERROR',
  'INTERNAL',
] as const;

/** Stable error codes; callers check these, never message text. */
export type PodminErrorCode = (typeof PODMIN_ERROR_CODES)[number];

/** True when `value` names a known error code. */
export function isPodminErrorCode(value: unknown): value is PodminErrorCode {
  return (PODMIN_ERROR_CODES as readonly unknown[]).includes(value);
}

/** Options shared by every podmin error. */
export interface PodminErrorOptions {
  /** Underlying error, shown as "Caused by:". */
  cause?: unknown;
  /** One line telling the operator what to do next. */
  hint?: string;
  /** Defaults by code; set to override. */
  fault?: ErrorFault;
}

const USER_CODES: ReadonlySet<PodminErrorCode> = new Set([
  'INVALID_ARGUMENT',
  'INVALID_MANIFEST',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'NO_CONTEXT',
  'CONTEXT_NOT_FOUND',
  'CONFIG_INVALID',
]);

/** Base error for every podmin library: a stable code, a "doing X: why" message, cause and hint. */
export class PodminError extends Error {
  readonly code: PodminErrorCode;
  readonly hint: string | undefined;
  readonly fault: ErrorFault;

  constructor(code: PodminErrorCode, message: string, options: PodminErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.fault = options.fault ?? (USER_CODES.has(code) ? 'user' : 'system');
  }
}

/** One problem found while validating input: the field path and what is allowed there. */
export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `spec.template.spec.containers[0].image`. */
  field: string;
  /** What is wrong and what is allowed. */
  message: string;
}

/** Validation failure listing every problem found, each naming its field. */
export class ValidationError extends PodminError {
  readonly problems: readonly FieldProblem[];

  constructor(
    subject: string,
    problems: readonly FieldProblem[],
    options: PodminErrorOptions & { code?: 'INVALID_ARGUMENT' | 'INVALID_MANIFEST' } = {},
  ) {
    // Each problem is one line whatever the input held: fields and messages echo input.
    const lines = problems.map((p) => escapeControlCharacters(`${p.field}: ${p.message}`));
    const message =
      lines.length === 1 ? `${subject}: ${lines[0]}` : `${subject}:\n  - ${lines.join('\n  - ')}`;
    super(options.code ?? 'INVALID_MANIFEST', message, options);
    this.problems = problems;
  }
}

/** True when `err` is a PodminError with the given code. */
export function hasCode(err: unknown, code: PodminErrorCode): err is PodminError {
  return err instanceof PodminError && err.code === code;
}
