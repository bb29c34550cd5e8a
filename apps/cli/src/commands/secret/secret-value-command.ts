import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import {
  loadSecrets,
  toWriteRequest,
  withSecretWrite,
  type SecretWriteArgs,
} from './secret-options';

/** What sets `podmin secret create` and `podmin secret update` apart. */
export interface SecretValueCommandSpec {
  command: string;
  describe: string;
  /** `[command, description]` pairs shown under Examples, in this order. */
  examples: Array<[string, string]>;
  /** The feature library's operation that writes the value. */
  operation: 'createSecret' | 'updateSecret';
}

/** Builds the command for a context; `input` replaces the terminal in tests. */
export type SecretValueCommand = (
  ctx: CliContext,
  input?: SecretValueInput,
) => CommandModule<object, SecretWriteArgs>;

/**
 * A `podmin secret` subcommand that writes a value read from `--from-file`, `--from-stdin` or a
 * hidden prompt to the addressed secret.
 */
export function secretValueCommand(spec: SecretValueCommandSpec): SecretValueCommand {
  return (ctx, input) => ({
    command: spec.command,
    describe: spec.describe,
    builder: (y) => withSecretWrite(y).example(spec.examples),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx, input);
      await lib[spec.operation](toWriteRequest(args), deps);
    },
  });
}
