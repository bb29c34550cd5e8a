import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { commandWord, withCommands, type CommandGroup } from '../command-group';
import { pauseRolloutCommand } from './pause.command';
import { restartRolloutCommand } from './restart.command';
import { resumeRolloutCommand } from './resume.command';

/** `podmin rollout <command>`: steer a deployment's rollout across its NodeGroup's nodes. */
export function rolloutCommand(ctx: CliContext): CommandGroup {
  const commands = [
    pauseRolloutCommand(ctx),
    resumeRolloutCommand(ctx),
    restartRolloutCommand(ctx),
  ] as CommandModule<object, never>[];
  return {
    command: 'rollout <command>',
    describe: 'Pause, resume or restart the rollout of a deployment across its nodes',
    subcommands: commands.map(commandWord),
    builder: (y) =>
      withCommands(y, commands)
        .demandCommand(1, 'Choose a rollout command')
        .example('$0 rollout pause web -g default', 'No new node moves to the new revision')
        .example('$0 rollout restart web -g default --wait', 'Restart every node, in waves'),
    handler: () => undefined,
  };
}
