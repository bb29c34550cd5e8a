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

/** `podmin secret create <key>`: create a secret for a pod (or the allowlisted system key). */
export function createSecretCommand(
  ctx: CliContext,
  input?: SecretValueInput,
): CommandModule<object, SecretAddressArgs & SecretValueArgs> {
  return {
    command: 'create <key>',
    describe: 'Create a secret for a Pod (or the allowlisted system key)',
    builder: (y) =>
      withSecretValue(withSecretAddress(y))
        .example(
          '$0 secret create database-url --for web -n product --from-file ./db-url.txt',
          'From a file, in the default secrets provider',
        )
        .example(
          'printf %s "$TOKEN" | $0 secret create oauth-token --for web --provider aws-secrets-manager --from-stdin',
          'From stdin, in Secrets Manager',
        )
        .example(
          '$0 secret create otel-logs-headers --system --from-file headers.json',
          'Log exporter headers: a JSON object of strings',
        ),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx, input);
      await lib.createSecret({ ...toAddress(args), ...toValueSource(args) }, deps);
    },
  };
}
