import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withRolloutTarget, type RolloutTargetArgs } from './rollout-options';

/** `podmin rollout resume <name> -g NG`: undo a pause, or try again after a halt. */
export function resumeRolloutCommand(ctx: CliContext): CommandModule<object, RolloutTargetArgs> {
  return {
    command: 'resume <name>',
    describe: 'Resume a paused or halted rollout of a deployment',
    builder: (y) =>
      withRolloutTarget(y)
        .example('$0 rollout resume web -g default', 'Nodes move on to the new revision in waves')
        .epilogue(
          'Clears paused in the cluster rollout state (dns/rollouts.json) by compare-and-swap. After a halt (a node whose new Pod was not available within the progress deadline) it also clears the halt and starts a new attempt, so the nodes that failed try again. Fix the cause first, or deploy another revision.',
        ),
    handler: async (args) => {
      const { store } = await ctx.currentBucket();
      const { resumeRollout } = await import('@podmin/cli-feature-deploy');
      const result = await resumeRollout(store, { nodegroup: args.nodegroup, name: args.name });
      ctx.reporter.info(result.message);
      ctx.reporter.result(result.key);
    },
  };
}
