import type { CommandModule } from 'yargs';
import type { CliContext } from '../cli-context';

/** What sets `podmin teardown` and `podmin destroy` apart. */
export interface LifecycleCommandSpec {
  /** The command word, and the provider lifecycle's operation it runs. */
  operation: 'teardown' | 'destroy';
  describe: string;
  /** The description of `-y/--yes`. */
  yesDescribe: string;
  /** `[command, description]` pairs shown under Examples, in this order. */
  examples: Array<[string, string]>;
  epilogue: string;
}

/**
 * A command that runs one operation of the current context's provider lifecycle, asking first
 * unless `-y` is given.
 */
export function lifecycleCommand(
  spec: LifecycleCommandSpec,
): (ctx: CliContext) => CommandModule<object, { yes?: boolean }> {
  return (ctx) => ({
    command: spec.operation,
    describe: spec.describe,
    builder: (y) =>
      y
        .option('yes', { alias: 'y', type: 'boolean', describe: spec.yesDescribe })
        .example(spec.examples)
        .epilogue(spec.epilogue),
    handler: async (args) => {
      const context = await ctx.currentContext();
      const lifecycle = ctx.provider(context).lifecycle(context);
      await lifecycle[spec.operation]({ assumeYes: args.yes === true });
    },
  });
}
