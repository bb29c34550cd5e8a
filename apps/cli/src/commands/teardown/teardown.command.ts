import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin teardown`: stop compute; the bucket, context and CA secrets are kept. */
export function teardownCommand(ctx: CliContext): CommandModule<object, { yes?: boolean }> {
  return {
    command: 'teardown',
    describe:
      "Destroy the cluster's compute and networking (AWS: through OpenTofu/Terraform; local: stop this machine's agent); bucket, context and CA secrets are kept",
    builder: (y) =>
      y
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe:
            'Destroy without asking (required when there is no terminal); a stale state lock is then reported with its force-unlock command, never forced',
        })
        .example('$0 teardown', 'AWS: plan the destruction, show it, ask, destroy')
        .example('$0 teardown -y', 'AWS: destroy without asking')
        .example('$0 teardown', 'Local: stop podmin-agent of every local NodeGroup of the cluster')
        .epilogue(
          'On AWS the module inputs are restored from tfstate/podmin.auto.tfvars.json in the bucket, so a teardown works after `podmin disconnect` and `podmin connect` too. `podmin setup` brings the cluster back with the same CAs.',
        ),
    handler: async (args) => {
      const context = await ctx.currentContext();
      await ctx
        .provider(context)
        .lifecycle(context)
        .teardown({ assumeYes: args.yes === true });
    },
  };
}
