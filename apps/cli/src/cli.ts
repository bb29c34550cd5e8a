import yargs from 'yargs/yargs';
import { formatError } from '@podmin/cli-util-io';
import { PodminError } from '@podmin/util-errors';
import { createCliContext, type CliContext } from './cli-context';
import { buildCommand } from './commands/build/build.command';
import { connectCommand } from './commands/connect/connect.command';
import { deleteCommand } from './commands/delete/delete.command';
import { deployCommand } from './commands/deploy/deploy.command';
import { destroyCommand } from './commands/destroy/destroy.command';
import { disconnectCommand } from './commands/disconnect/disconnect.command';
import { fetchCommand } from './commands/fetch/fetch.command';
import { historyCommand } from './commands/history/history.command';
import { initCommand } from './commands/init/init.command';
import { installCommand } from './commands/install/install.command';
import { listCommand } from './commands/list/list.command';
import { pullCommand } from './commands/pull/pull.command';
import { pushCommand } from './commands/push/push.command';
import { rollbackCommand } from './commands/rollback/rollback.command';
import { rolloutCommand } from './commands/rollout/rollout.command';
import { secretCommand } from './commands/secret/secret.command';
import { setupCommand } from './commands/setup/setup.command';
import { statusCommand } from './commands/status/status.command';
import { teardownCommand } from './commands/teardown/teardown.command';
import { useCommand } from './commands/use/use.command';
import { validateCommand } from './commands/validate/validate.command';

declare const __PODMIN_VERSION__: string | undefined;

/** The CLI version, injected by the bundler. */
export const VERSION = typeof __PODMIN_VERSION__ === 'string' ? __PODMIN_VERSION__ : '0.0.0-dev';

/** An invocation error from yargs (bad flags): shown with usage. */
class UsageError extends PodminError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
  }
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

/** Runs the CLI with `argv`; resolves to the process exit code. */
export async function run(argv: string[], ctx: CliContext = createCliContext()): Promise<number> {
  const debug = argv.includes('--debug');
  const parser = yargs(argv)
    .scriptName('podmin')
    .usage(
      '$0 <command> [options]\n\nRun Kubernetes static Pods on VMs with an unmodified kubelet and no control plane.',
    )
    .command(connectCommand(ctx))
    .command(useCommand(ctx))
    .command(disconnectCommand(ctx))
    .command(initCommand(ctx))
    .command(validateCommand(ctx))
    .command(deployCommand(ctx))
    .command(listCommand(ctx))
    .command(statusCommand(ctx))
    .command(deleteCommand(ctx))
    .command(historyCommand(ctx))
    .command(rollbackCommand(ctx))
    .command(rolloutCommand(ctx))
    .command(installCommand(ctx))
    .command(secretCommand(ctx))
    .command(fetchCommand(ctx))
    .command(buildCommand(ctx))
    .command(pullCommand(ctx))
    .command(pushCommand(ctx))
    .command(setupCommand(ctx))
    .command(teardownCommand(ctx))
    .command(destroyCommand(ctx))
    .completion('completion', 'Print a bash/zsh completion script (eval "$(podmin completion)")')
    .option('debug', { type: 'boolean', describe: 'Show stack traces of errors', global: true })
    .demandCommand(1, 'Choose a command; see the list above')
    .recommendCommands()
    .strict()
    .version(VERSION)
    .alias('h', 'help')
    .alias('v', 'version')
    .wrap(helpWidth(argv))
    .epilogue(
      'init, validate, build, pull, fetch, use, connect, disconnect and completion work without a current context; every other command needs one.',
    )
    .fail((msg, err) => {
      if (err) throw err;
      throw new UsageError(msg);
    })
    .exitProcess(false);
  try {
    await parser.parseAsync();
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.reporter.info(await parser.getHelp());
      ctx.reporter.info('');
    }
    ctx.reporter.info(formatError(err, debug).trimEnd());
    return 1;
  }
}
