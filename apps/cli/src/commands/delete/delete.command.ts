import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withDeploymentTarget, type DeploymentTargetArgs } from '../deployment-target';
import { runWithOutput, withOutputOption, type OutputArgs } from '../output-option';
import {
  SIGNING_EPILOGUE,
  bucketWithSigning,
  withSigningFlags,
  type SigningArgs,
} from '../signing-options';

/** `podmin delete <name> -g NG`: remove a deployment from desired state. */
export function deleteCommand(
  ctx: CliContext,
): CommandModule<object, OutputArgs & DeploymentTargetArgs & SigningArgs> {
  return {
    command: 'delete <name>',
    describe: 'Remove a deployment from the cluster desired state',
    builder: (y) =>
      withOutputOption(
        withSigningFlags(withDeploymentTarget(y))
          .epilogue(SIGNING_EPILOGUE)
          .example(
            '$0 delete web -g default',
            'Nodes of NodeGroup default remove the Pod on their next poll',
          )
          .example('$0 rollback web -g default', 'Undo the delete: restore the removed revision'),
        [
          [
            '$0 delete web -g default -o json',
            'Print {key, deleted} with deleted the revision removed',
          ],
          ['$0 delete web -g default -o name', 'Print deployment/default/web'],
        ],
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { context, store, signed } = await bucketWithSigning(
          ctx,
          args,
          `deleting ${args.nodegroup}/${args.name}`,
        );
        const { deleteDeployment, historyWarning } = await import('@podmin/cli-feature-deploy');
        const { key, previous, history, revision } = await deleteDeployment(
          store,
          args.nodegroup,
          args.name,
          signed,
        );
        const unrecorded = historyWarning(key, previous, history);
        if (unrecorded !== undefined) ctx.reporter.warn(unrecorded);
        ctx.reporter.info(
          `Deleted ${key} from cluster ${context.cluster} desired state; nodes remove the Pod asynchronously.`,
        );
        return {
          data: { key, deleted: revision },
          // The line on stderr says it for people; stdout stays empty as before.
          table: () => '',
          names: () => [`deployment/${key}`],
        };
      }),
  };
}
