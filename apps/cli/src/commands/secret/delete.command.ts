import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import {
  loadSecrets,
  toAddress,
  withSecretAddress,
  type SecretAddressArgs,
} from './secret-options';

/** `podmin secret delete <key>`: schedule deletion (Secrets Manager's 30-day recovery window). */
export function deleteSecretCommand(ctx: CliContext): CommandModule<object, SecretAddressArgs> {
  return {
    command: 'delete <key>',
    describe: 'Schedule deletion with a 30-day recovery window (Secrets Manager only)',
    builder: (y) =>
      withSecretAddress(y)
        .example(
          '$0 secret delete oauth-token --for web --provider aws-secrets-manager',
          'Restorable for 30 days',
        )
        .example('$0 secret destroy log-level --for web -y', 'Parameter Store: delete permanently'),
    handler: async (args) => {
      const { lib, deps } = await loadSecrets(ctx);
      await lib.deleteSecret(toAddress(args), deps);
    },
  };
}
