import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import {
  loadSecrets,
  toAddress,
  toValueSource,
  withSecretAddress,
  withSecretValue,
  type SecretAddressArgs,
  type SecretValueArgs,
} from './secret-options';

/** `podmin secret update <key>`: replace the value of an existing secret. */
export function updateSecretCommand(
  ctx: CliContext,
  input?: SecretValueInput,
): CommandModule<object, SecretAddressArgs & SecretValueArgs> {
  return {
    command: 'update <key>',
    describe: 'Replace the value of an existing secret',
    builder: (y) =>
      withSecretValue(withSecretAddress(y))
        .example(
          '$0 secret update database-url --for web -n product --from-file ./db-url.txt',
          'From a file',
        )
        .example(
          '$0 secret update log-level --for web',
          'Prompt for the value without echoing it (on a terminal)',
        )
        .example(
          '$0 secret update otel-logs-headers --system --from-stdin < headers.json',
          'The log exporter headers',
        ),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx, input);
      await lib.updateSecret({ ...toAddress(args), ...toValueSource(args) }, deps);
    },
  };
}
