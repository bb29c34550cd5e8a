// Fakes and shared cases for the unit specs of the two AWS adapters. Not exported from index.ts:
// it needs jest's globals.
import type { PodminError, PodminErrorCode } from '@podmin/util-errors';

/** One command a fake client was sent: the command's class name and its input. */
export interface SentCommand {
  command: string;
  input: Record<string, unknown>;
}

/** A fake AWS SDK client: records each command's name and input, answers from a queue. */
export class FakeAwsClient {
  readonly sent: SentCommand[] = [];
  /** Answers in order: an Error rejects, anything else resolves; `{}` once they run out. */
  readonly answers: Array<unknown> = [];

  send(command: { constructor: { name: string }; input: unknown }): Promise<unknown> {
    this.sent.push({
      command: command.constructor.name,
      input: command.input as Record<string, unknown>,
    });
    const next = this.answers.shift();
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? {});
  }
}

/** The constructor of a service's base exception class, e.g. SSMServiceException. */
export type ServiceExceptionClass<E> = new (options: {
  name: string;
  $fault: 'client' | 'server';
  $metadata: { httpStatusCode: number };
  message: string;
}) => E;

/** Builds `Exception`'s service errors as the SDK builds them from a response with a status. */
export function serviceErrorsOf<E>(
  Exception: ServiceExceptionClass<E>,
): (name: string, status: number) => E {
  return (name, status) =>
    new Exception({
      name,
      $fault: status >= 500 ? 'server' : 'client',
      $metadata: { httpStatusCode: status },
      message: `${name} happened`,
    });
}

/** One error translation case: a label for the test name, the error, and the expected code. */
export type TranslationCase = [label: string, err: unknown, code: PodminErrorCode];

/**
 * Registers `maps %s to %s and keeps the cause` for every case: `translate(err, doing)` has the
 * case's code, keeps `err` as its cause, and its message starts with `<doing>: `.
 */
export function itTranslatesEach(
  translate: (err: unknown, doing: string) => PodminError,
  doing: string,
  cases: TranslationCase[],
): void {
  const prefix = new RegExp(`^${doing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `);
  it.each(cases)('maps %s to %s and keeps the cause', (_label, err, code) => {
    const translated = translate(err, doing);
    expect(translated.code).toBe(code);
    expect(translated.cause).toBe(err);
    expect(translated.message).toMatch(prefix);
  });
}
