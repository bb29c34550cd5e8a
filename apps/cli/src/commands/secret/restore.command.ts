import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import {
  loadSecrets,
  toAddress,
  withSecretAddress,
  type SecretAddressArgs,
} from './secret-options';

/** `podmin secret restore <key>`: cancel a scheduled deletion. */
export function restoreSecretCommand(ctx: CliContext): CommandModule<object, SecretAddressArgs> {
  return {
    command: 'restore <key>',
    describe: 'Cancel a scheduled deletion (Secrets Manager only)',
    builder: (y) =>
      withSecretAddress(y).example(
        '$0 secret restore oauth-token --for web --provider aws-secrets-manager',
        'Undo `podmin secret delete` within its recovery window',
      ),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx);
      await lib.restoreSecret(toAddress(args), deps);
    },
  };
}
