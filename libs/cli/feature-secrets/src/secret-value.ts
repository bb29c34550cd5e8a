import { PodminError } from '@podmin/util-errors';
import type { SecretValueInput } from './secrets.ports';

/** Where the operator asked the value to come from. */
export interface ValueSource {
  /** `--from-file F`. */
  fromFile?: string;
  /** `--from-stdin`. */
  fromStdin?: boolean;
}

/**
 * Reads a secret value from `--from-file`, `--from-stdin`, or else a hidden prompt on a
 * terminal. File and stdin bytes are kept exactly (a trailing newline is part of the value).
 */
export async function readSecretValue(
  source: ValueSource,
  input: SecretValueInput,
  label: string,
): Promise<Buffer> {
  if (source.fromFile !== undefined && source.fromStdin) {
    throw new PodminError('INVALID_ARGUMENT', 'choose one of --from-file and --from-stdin');
  }
  if (source.fromFile !== undefined) return input.readFile(source.fromFile);
  if (source.fromStdin) return input.readStdin();
  if (!input.interactive) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `reading the value of ${label}: no value source and no terminal to prompt on`,
      {
        hint: 'pass --from-file FILE or --from-stdin (e.g. `printf %s "$VALUE" | podmin secret …`)',
      },
    );
  }
  return input.promptHidden(`Value for ${label} (input hidden): `);
}
