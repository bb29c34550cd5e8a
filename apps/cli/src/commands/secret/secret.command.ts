import type { CommandModule } from 'yargs';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import type { CliContext } from '../../cli-context';
import { commandWord, withCommands, type CommandGroup } from '../command-group';
import { createSecretCommand } from './create.command';
import { deleteSecretCommand } from './delete.command';
import { destroySecretCommand } from './destroy.command';
import { listSecretsCommand } from './list.command';
import { restoreSecretCommand } from './restore.command';
import { updateSecretCommand } from './update.command';

/** `podmin secret <command>`: the secrets of Pods at /<cluster>/<namespace>/<pod>/<key>. */
export function secretCommand(ctx: CliContext, input?: SecretValueInput): CommandGroup {
  const commands = [
    createSecretCommand(ctx, input),
    updateSecretCommand(ctx, input),
    listSecretsCommand(ctx),
    deleteSecretCommand(ctx),
    restoreSecretCommand(ctx),
    destroySecretCommand(ctx, input),
  ] as CommandModule<object, never>[];
  return {
    command: 'secret <command>',
    describe: 'Manage Pod secrets in the provider secret store',
    subcommands: commands.map(commandWord),
    builder: (y) =>
      withCommands(y, commands)
        .demandCommand(1, 'Choose a secret command')
        .example(
          '$0 secret create database-url --for web --from-file db-url.txt',
          'Mounted at /var/run/podmin/aws-parameter-store/database-url in Pod web',
        ),
    handler: () => undefined,
  };
}
