import type { Argv, CommandModule } from 'yargs';

/** A command whose first argument is one of its subcommands (`secret create`, `rollout pause`). */
export type CommandGroup = CommandModule & {
  /** The subcommands' names, for naming the closest one when an unknown one is typed. */
  subcommands: readonly string[];
};

/** The word a command is invoked by: the first word of its `command` string. */
export function commandWord(module: CommandModule<object, never>): string {
  const command: string | readonly string[] | undefined = module.command;
  const first = typeof command === 'string' ? command : command?.[0];
  return (first ?? '').split(' ')[0] ?? '';
}

/** Registers every command on a yargs instance. */
export function withCommands<T>(
  y: Argv<T>,
  commands: readonly CommandModule<object, never>[],
): Argv<T> {
  let out = y;
  for (const command of commands) out = out.command(command as CommandModule<T, never>);
  return out;
}
