import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin use [cluster]`: select a context, or list them. */
export function useCommand(ctx: CliContext): CommandModule<object, { cluster?: string }> {
  return {
    command: 'use [cluster]',
    describe: 'Select a saved cluster context, or list contexts when no cluster is given',
    builder: (y) =>
      y
        .positional('cluster', { type: 'string', describe: 'Cluster to select' })
        .example('$0 use', 'List contexts; the current one is marked with *')
        .example('$0 use prod', 'Make prod the current context'),
    handler: async (args) => {
      const { useContext, renderContexts } = await import('@podmin/cli-feature-context');
      if (args.cluster === undefined) ctx.reporter.result(await renderContexts(ctx));
      else await useContext(args.cluster, ctx);
    },
  };
}
