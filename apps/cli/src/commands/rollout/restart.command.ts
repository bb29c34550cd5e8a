import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { parseDuration } from '../deploy/deploy.command';
import { withDeploymentTarget, type DeploymentTargetArgs } from '../deployment-target';
import {
  SIGNING_EPILOGUE,
  resolveSigning,
  withSigningFlags,
  type SigningArgs,
} from '../signing-options';

type RestartArgs = DeploymentTargetArgs & SigningArgs & { wait?: boolean; timeout: string };

/** `podmin rollout restart <name> -g NG`: a new revision of the same template, rolled out. */
export function restartRolloutCommand(ctx: CliContext): CommandModule<object, RestartArgs> {
  return {
    command: 'restart <name>',
    describe:
      'Restart the Pods of a deployment on every node by committing a new revision of the same template',
    builder: (y) =>
      withSigningFlags(withDeploymentTarget(y))
        .option('wait', {
          type: 'boolean',
          describe:
            'After the commit, wait until every live node of the NodeGroup reports the new revision Ready, as deploy --wait does',
        })
        .option('timeout', {
          type: 'string',
          default: '5m',
          describe: 'How long --wait waits: 90s, 5m, 1h',
        })
        .check((a) => {
          if (parseDuration(String(a.timeout)) === undefined)
            throw new Error(
              `--timeout: ${JSON.stringify(a.timeout)} is not a duration like 90s, 5m or 1h`,
            );
          return true;
        })
        .example('$0 rollout restart web -g default', 'Every node restarts web, in waves')
        .example(
          '$0 rollout restart web -g default --wait --timeout 10m',
          'And wait until every live node runs it Ready',
        )
        .epilogue(
          "Sets the annotation podmin.dev/restartedAt of the Pod template to now (as `kubectl rollout restart` does), stores it as a new payload and commits it by the same compare-and-swap as deploy, recording the replaced entry in history (`podmin rollback` puts it back). Nodes move to it as the DaemonSet's update strategy says.\n\n" +
            SIGNING_EPILOGUE,
        ),
    handler: async (args) => {
      const { restartRollout } = await import('@podmin/cli-feature-deploy');
      const signing = await resolveSigning(
        ctx,
        await ctx.currentContext(),
        args,
        `restarting ${args.nodegroup}/${args.name}`,
      );
      const signed = signing === undefined ? {} : { signing };
      await restartRollout(
        {
          openBucket: () => ctx.currentBucket(),
          reporter: ctx.reporter,
          progress: (line) => ctx.reporter.info(line),
        },
        { nodegroup: args.nodegroup, name: args.name },
        args.wait
          ? { ...signed, waitFor: { timeoutMs: parseDuration(args.timeout) ?? 300_000 } }
          : signed,
      );
    },
  };
}
