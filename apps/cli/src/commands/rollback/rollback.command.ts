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

/** `podmin rollback <name> -g NG [--to REVISION]`: re-commit an earlier revision. */
export function rollbackCommand(
  ctx: CliContext,
): CommandModule<
  object,
  OutputArgs & DeploymentTargetArgs & SigningArgs & { to?: string; pin: boolean }
> {
  return {
    command: 'rollback <name>',
    describe:
      'Commit an earlier revision of a deployment again (by default the one before the current)',
    builder: (y) =>
      withOutputOption(
        withSigningFlags(withDeploymentTarget(y))
          .option('to', {
            type: 'string',
            describe:
              'Revision from `podmin history`, or a unique prefix of it (4 or more hex characters)',
          })
          .option('pin', {
            type: 'boolean',
            default: true,
            describe:
              'A revision whose Pod names images by tag is pinned by digest (what each tag names now) and committed as a new revision; --no-pin re-commits it byte-identical with its tags: UNSAFE, whoever can write the bucket can move a tag and change what runs',
          })
          .example('$0 rollback web -g default', 'Back to the revision before the current one')
          .example('$0 rollback web -g default --to 3f2a9c01', 'Back to a revision by its prefix'),
        [
          [
            '$0 rollback web -g default -o json',
            'Print {key, changed, revision, from} (from is null after a delete)',
          ],
          ['$0 rollback web -g default -o name', 'Print deployment/default/web'],
        ],
      ).epilogue(
        'The revision is committed through the same compare-and-swap as deploy after its payloads are verified, and the entry it replaces is recorded in history. A revision already pinned by digest is committed byte-identical; one that names images by tag is pinned first (a new revision) unless --no-pin. A deleted deployment is restored. An unknown or ambiguous revision changes nothing. Nodes reconcile asynchronously.\n\n' +
          SIGNING_EPILOGUE,
      ),
    handler: (args) =>
      runWithOutput(ctx, args.output, async () => {
        const { context, store, signed } = await bucketWithSigning(
          ctx,
          args,
          `rolling back ${args.nodegroup}/${args.name}`,
        );
        const { rollbackDeployment, historyWarning } = await import('@podmin/cli-feature-deploy');
        const result = await rollbackDeployment(
          store,
          {
            nodegroup: args.nodegroup,
            name: args.name,
            ...(args.to === undefined ? {} : { to: args.to }),
          },
          { pin: args.pin, ...signed },
        );
        if (result.pinnedFrom !== undefined)
          ctx.reporter.info(
            `Revision ${result.pinnedFrom} named its images by tag; pinned them by digest as revision ${result.revision}`,
          );
        const unrecorded = historyWarning(result.key, result.previous, result.history);
        if (unrecorded !== undefined) ctx.reporter.warn(unrecorded);
        const from = result.from === null ? 'deleted' : `revision ${result.from}`;
        ctx.reporter.info(
          result.changed
            ? `Rolled back ${result.key} from ${from} to revision ${result.revision} in cluster ${context.cluster} desired state. Nodes in NodeGroup ${args.nodegroup} reconcile it asynchronously; this does not mean the Pod is running.`
            : `Already at revision ${result.revision}: ${result.key} is unchanged.`,
        );
        return {
          data: {
            key: result.key,
            changed: result.changed,
            revision: result.revision,
            from: result.from,
          },
          table: () => result.revision,
          names: () => [`deployment/${result.key}`],
        };
      }),
  };
}
