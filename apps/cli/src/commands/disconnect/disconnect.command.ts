import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin disconnect <cluster>`: forget a context locally. */
export function disconnectCommand(ctx: CliContext): CommandModule<object, { cluster: string }> {
  return {
    command: 'disconnect <cluster>',
    describe:
      'Remove a cluster context and its local files; the bucket and cloud resources are untouched',
    builder: (y) =>
      y
        .positional('cluster', {
          type: 'string',
          demandOption: true,
          describe: 'Cluster to forget',
        })
        .example('$0 disconnect demo', 'Forget the demo context'),
    handler: async (args) => {
      const { disconnect } = await import('@podmin/cli-feature-context');
      await disconnect(args.cluster, ctx);
    },
  };
}
