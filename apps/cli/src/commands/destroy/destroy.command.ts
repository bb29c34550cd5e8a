import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin destroy`: remove the whole cluster, its bucket and CAs, then its context. */
export function destroyCommand(ctx: CliContext): CommandModule<object, { yes?: boolean }> {
  return {
    command: 'destroy',
    describe:
      'Destroy the cluster for good: its infrastructure (OpenTofu/Terraform), both CA secrets, every object and the bucket; the context is removed only after all of that succeeded',
    builder: (y) =>
      y
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe: 'Destroy without asking (required when there is no terminal)',
        })
        .example('$0 destroy', 'Ask once, then destroy the current cluster and its bucket')
        .example('$0 destroy -y', 'Destroy without asking (scripts)')
        .epilogue(
          'To hand the bucket to another owner instead, use `podmin teardown` and `podmin disconnect`; destroy deletes it.',
        ),
    handler: async (args) => {
      const context = await ctx.currentContext();
      await ctx
        .provider(context)
        .lifecycle(context)
        .destroy({ assumeYes: args.yes === true });
    },
  };
}
