import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin delete <name> -g NG`: remove a deployment from desired state. */
export function deleteCommand(
  ctx: CliContext,
): CommandModule<object, { name: string; nodegroup: string }> {
  return {
    command: 'delete <name>',
    describe: 'Remove a deployment from the cluster desired state',
    builder: (y) =>
      y
        .positional('name', { type: 'string', demandOption: true, describe: 'Deployment name' })
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          demandOption: true,
          describe: 'NodeGroup of the deployment',
        })
        .example(
          '$0 delete web -g default',
          'Nodes of NodeGroup default remove the Pod on their next poll',
        )
        .example('$0 rollback web -g default', 'Undo the delete: restore the removed revision'),
    handler: async (args) => {
      const { context, store } = await ctx.currentBucket();
      const { deleteDeployment, historyWarning } = await import('@podmin/cli-feature-deploy');
      const { key, previous, history } = await deleteDeployment(store, args.nodegroup, args.name);
      const unrecorded = historyWarning(key, previous, history);
      if (unrecorded !== undefined) ctx.reporter.warn(unrecorded);
      ctx.reporter.info(
        `Deleted ${key} from cluster ${context.cluster} desired state; nodes remove the Pod asynchronously.`,
      );
    },
  };
}
