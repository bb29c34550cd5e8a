import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import {
  loadSecrets,
  toAddress,
  withSecretAddress,
  type SecretAddressArgs,
} from './secret-options';

/** `podmin secret destroy <key>`: delete permanently after confirmation. */
export function destroySecretCommand(
  ctx: CliContext,
  input?: SecretValueInput,
): CommandModule<object, SecretAddressArgs & { yes?: boolean }> {
  return {
    command: 'destroy <key>',
    describe: 'Delete a secret permanently, without recovery (asks first unless -y)',
    builder: (y) =>
      withSecretAddress(y)
        .option('yes', { alias: 'y', type: 'boolean', describe: 'Do not ask for confirmation' })
        .example('$0 secret destroy log-level --for web', 'Asks on the terminal first')
        .example(
          '$0 secret destroy oauth-token --for web --provider aws-secrets-manager -y',
          'In scripts',
        ),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx, input);
      await lib.destroySecret({ ...toAddress(args), ...(args.yes ? { yes: true } : {}) }, deps);
    },
  };
}
