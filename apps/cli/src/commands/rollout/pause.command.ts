import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withRolloutTarget, type RolloutTargetArgs } from './rollout-options';

/** `podmin rollout pause <name> -g NG`: no new node moves to the target revision. */
export function pauseRolloutCommand(ctx: CliContext): CommandModule<object, RolloutTargetArgs> {
  return {
    command: 'pause <name>',
    describe: 'Pause the rollout of a deployment: no new node moves to its new revision',
    builder: (y) =>
      withRolloutTarget(y)
        .example('$0 rollout pause web -g default', 'Hold the rollout of web where it is')
        .epilogue(
          'Sets paused in the cluster rollout state (dns/rollouts.json) by compare-and-swap; the leader agent then admits no new node. Nodes already moving finish. Works before a deploy too: the next revision then waits. Undo with `podmin rollout resume`.',
        ),
    handler: async (args) => {
      const { store } = await ctx.currentBucket();
      const { pauseRollout } = await import('@podmin/cli-feature-deploy');
      const result = await pauseRollout(store, { nodegroup: args.nodegroup, name: args.name });
      ctx.reporter.info(result.message);
      ctx.reporter.result(result.key);
    },
  };
}
