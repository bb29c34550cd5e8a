import fs from 'node:fs';
import type { CommandModule, FallbackCompletionFunction } from 'yargs';
import yargs from 'yargs/yargs';
import { chooseContext, parseConfig } from '@podmin/cli-util-config';
import {
  EXIT_OK,
  UsageError,
  closestName,
  exitCodeFor,
  formatError,
  type ExitCode,
} from '@podmin/cli-util-io';
import { createCliContext, type CliContext } from './cli-context';
import { buildCommand } from './commands/build/build.command';
import { connectCommand } from './commands/connect/connect.command';
import { deleteCommand } from './commands/delete/delete.command';
import { deployCommand } from './commands/deploy/deploy.command';
import { destroyCommand } from './commands/destroy/destroy.command';
import { disconnectCommand } from './commands/disconnect/disconnect.command';
import { fetchCommand } from './commands/fetch/fetch.command';
import { historyCommand } from './commands/history/history.command';
import { logsCommand } from './commands/logs/logs.command';
import { initCommand } from './commands/init/init.command';
import { installCommand } from './commands/install/install.command';
import { listCommand } from './commands/list/list.command';
import { pullCommand } from './commands/pull/pull.command';
import { pushCommand } from './commands/push/push.command';
import { rollbackCommand } from './commands/rollback/rollback.command';
import { commandWord, type CommandGroup } from './commands/command-group';
import { rolloutCommand } from './commands/rollout/rollout.command';
import { secretCommand } from './commands/secret/secret.command';
import { setupCommand } from './commands/setup/setup.command';
import { statusCommand } from './commands/status/status.command';
import { teardownCommand } from './commands/teardown/teardown.command';
import { trustCommand } from './commands/trust/trust.command';
import { useCommand } from './commands/use/use.command';
import { validateCommand } from './commands/validate/validate.command';
import { versionCommand } from './commands/version/version.command';

declare const __PODMIN_VERSION__: string | undefined;

/** The CLI version, injected by the bundler. */
export const VERSION = typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev';

/** What `podmin --help` ends with: which commands need a context, how to pick one, exit codes. */
const EPILOGUE = [
  'init, validate, build, pull, fetch, use, connect, disconnect, version and completion work without a current context; every other command needs one.',
  '',
  'Output: every command that prints data takes -o/--output table (default) | json | yaml | name. json and yaml print one document on stdout and nothing else (no progress; warnings and errors on stderr); name prints one <kind>/<name> per line, like kubectl -o name.',
  '',
  'Context: --context NAME (or PODMIN_CONTEXT=NAME) uses the saved context NAME for this one invocation instead of the current one, and never changes the current one; --context wins over PODMIN_CONTEXT. Commands that need no context ignore both.',
  '',
  'Exit codes: 0 success; 1 the operation failed; 2 usage error (unknown command or flag, bad value, missing argument).',
].join('\n');

/** The name a command module is invoked by: the first word of its command string. */
/** The commands an invocation may start with, and the subcommands of each group command. */
interface CommandTree {
  names: readonly string[];
  groups: Readonly<Record<string, readonly string[]>>;
}

/**
 * The usage error for a yargs failure message. An unknown command names itself and, when one
 * is a near miss, the command it was probably meant to be (`secret craete` → `secret create`);
 * it is shown without the usage.
 */
function usageError(message: string, tree: CommandTree, argv: readonly string[]): UsageError {
  const unknownCommand = (unknown: string, suggestion: string | undefined) =>
    new UsageError(
      `Unknown command ${JSON.stringify(unknown)}${suggestion === undefined ? '' : `; did you mean ${JSON.stringify(suggestion)}?`}`,
      { hint: 'run `podmin --help` for the list of commands', showUsage: false },
    );
  // A group's unknown subcommand: yargs names the word after it, or only asks for a command.
  const [group, sub] = argv.filter((word) => !word.startsWith('-'));
  const subcommands = group === undefined ? undefined : tree.groups[group];
  if (subcommands !== undefined && sub !== undefined && !subcommands.includes(sub)) {
    const closest = closestName(sub, subcommands);
    return unknownCommand(`${group} ${sub}`, closest && `${group} ${closest}`);
  }
  const unknown = /^Unknown commands?: (.+)$/.exec(message)?.[1]?.split(', ')[0];
  if (unknown === undefined) return new UsageError(message);
  return unknownCommand(unknown, closestName(unknown, tree.names));
}

/**
 * Shell completion: the saved context names after `--context` (or `--context=`), undefined
 * (yargs' own completions of commands and flags) everywhere else. `argv` is the raw
 * invocation, which ends with the word being completed. The config is read synchronously:
 * yargs validates the command line as soon as a completion callback returns, so an answer
 * given later would come after a usage error. A config that cannot be read completes nothing.
 */
function completeContexts(argv: readonly string[], ctx: CliContext): string[] | undefined {
  const current = argv.at(-1) ?? '';
  const inline = current.startsWith('--context=');
  if (!inline && argv.at(-2) !== '--context') return undefined;
  let names: string[];
  try {
    const file = ctx.contexts.file;
    const config = parseConfig(fs.readFileSync(file, 'utf8'), file, ctx.providers.names);
    names = Object.keys(config.contexts).sort();
  } catch {
    return [];
  }
  const typed = inline ? current.slice('--context='.length) : current;
  return names.filter((n) => n.startsWith(typed)).map((n) => (inline ? `--context=${n}` : n));
}

/**
 * The width yargs wraps help to: the terminal's, read only when help is asked for, since reading
 * process.stdout.columns builds the stdout stream, a cost every other command would pay.
 */
function helpWidth(argv: readonly string[]): number {
  const asksHelp =
    argv.length === 0 || argv.some((a) => a === '--help' || a === '-h' || a === 'help');
  return Math.min(120, (asksHelp ? process.stdout.columns : undefined) || 100);
}

/**
 * Runs the CLI with `argv`; resolves to the process exit code: 0 success, 1 the operation
 * failed, 2 usage error.
 */
export async function run(argv: string[], ctx: CliContext = createCliContext()): Promise<ExitCode> {
  const debug = argv.includes('--debug');
  // Until the flags are parsed, only the variable can have chosen a context.
  ctx.contextChoice = chooseContext(undefined, ctx.env.context);
  const commands = [
    connectCommand(ctx),
    useCommand(ctx),
    disconnectCommand(ctx),
    initCommand(ctx),
    validateCommand(ctx),
    deployCommand(ctx),
    listCommand(ctx),
    statusCommand(ctx),
    deleteCommand(ctx),
    historyCommand(ctx),
    logsCommand(ctx),
    rollbackCommand(ctx),
    rolloutCommand(ctx),
    installCommand(ctx),
    secretCommand(ctx),
    trustCommand(ctx),
    fetchCommand(ctx),
    buildCommand(ctx),
    pullCommand(ctx),
    pushCommand(ctx),
    setupCommand(ctx),
    teardownCommand(ctx),
    destroyCommand(ctx),
    versionCommand(ctx, VERSION),
  ] as CommandModule<object, never>[];
  const tree: CommandTree = {
    names: [...commands.map(commandWord), 'completion'],
    groups: Object.fromEntries(
      commands.flatMap((c) =>
        'subcommands' in c ? [[commandWord(c), (c as CommandGroup).subcommands]] : [],
      ),
    ),
  };
  let parser = yargs(argv)
    .scriptName('podmin')
    .usage(
      '$0 <command> [options]\n\nRun Kubernetes static Pods on VMs with an unmodified kubelet and no control plane.',
    );
  for (const command of commands) parser = parser.command(command);
  parser = parser
    .completion('completion', 'Print a bash/zsh completion script (eval "$(podmin completion)")', ((
      _current,
      _argv,
      defaultCompletions,
      done,
    ) => {
      const contexts = completeContexts(argv, ctx);
      if (contexts === undefined) defaultCompletions();
      else done(contexts);
    }) satisfies FallbackCompletionFunction)
    .option('debug', { type: 'boolean', describe: 'Show stack traces of errors', global: true })
    .option('context', {
      type: 'string',
      requiresArg: true,
      global: true,
      describe:
        'Use this saved context for this invocation only, instead of the current one (env: PODMIN_CONTEXT); never saved',
    })
    .check((args) => {
      if (args['context'] === '') throw new UsageError('--context needs a context name');
      return true;
    }, true)
    .middleware((args) => {
      ctx.contextChoice = chooseContext(
        typeof args['context'] === 'string' ? args['context'] : undefined,
        ctx.env.context,
      );
    })
    .demandCommand(1, 'Choose a command; see the list above')
    .strict()
    .strictCommands()
    .version(VERSION)
    .alias('h', 'help')
    .alias('v', 'version')
    .wrap(helpWidth(argv))
    .epilogue(EPILOGUE)
    .fail((msg: string | null, err: Error | undefined) => {
      // A handler's failure arrives without a message; everything else that reaches here is
      // about the invocation: yargs' validation and parse errors, and the commands' checks.
      if (err instanceof UsageError) throw err;
      if (msg === null) throw err ?? new Error('the command failed');
      throw usageError(msg, tree, argv);
    })
    .exitProcess(false);
  try {
    await parser.parseAsync();
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError && err.showUsage) {
      ctx.reporter.info(await parser.getHelp());
      ctx.reporter.info('');
    }
    ctx.reporter.info(formatError(err, debug).trimEnd());
    return exitCodeFor(err);
  }
}
