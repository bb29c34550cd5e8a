import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import { createSecretCommand } from './create.command';
import { deleteSecretCommand } from './delete.command';
import { destroySecretCommand } from './destroy.command';
import { listSecretsCommand } from './list.command';
import { restoreSecretCommand } from './restore.command';
import { updateSecretCommand } from './update.command';

/** `podmin secret <command>`: the secrets of Pods at /<cluster>/<namespace>/<pod>/<key>. */
export function secretCommand(ctx: CliContext, input?: SecretValueInput): CommandModule {
  return {
    command: 'secret <command>',
    describe: 'Manage Pod secrets in the provider secret store',
    builder: (y) =>
      y
        .command(createSecretCommand(ctx, input))
        .command(updateSecretCommand(ctx, input))
        .command(listSecretsCommand(ctx))
        .command(deleteSecretCommand(ctx))
        .command(restoreSecretCommand(ctx))
        .command(destroySecretCommand(ctx, input))
        .demandCommand(1, 'Choose a secret command')
        .example(
          '$0 secret create database-url --for web --from-file db-url.txt',
          'Mounted at /var/run/podmin/aws-parameter-store/database-url in Pod web',
        ),
    handler: () => undefined,
  };
}
