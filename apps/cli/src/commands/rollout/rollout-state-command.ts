import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';
import { withDeploymentTarget, type DeploymentTargetArgs } from '../deployment-target';

/** What sets `podmin rollout pause` and `podmin rollout resume` apart. */
export interface RolloutStateCommandSpec {
  command: string;
  describe: string;
  /** The one `[command, description]` shown under Examples. */
  example: [string, string];
  epilogue: string;
  /** The feature library's operation on the cluster rollout state. */
  operation: 'pauseRollout' | 'resumeRollout';
}

/**
 * A `podmin rollout` subcommand that changes one deployment's entry in the cluster rollout state,
 * then says what changed (stderr) and prints the deployment's key (stdout).
 */
export function rolloutStateCommand(
  spec: RolloutStateCommandSpec,
): (ctx: CliContext) => CommandModule<object, DeploymentTargetArgs> {
  return (ctx) => ({
    command: spec.command,
    describe: spec.describe,
    builder: (y) =>
      withDeploymentTarget(y)
        .example(...spec.example)
        .epilogue(spec.epilogue),
    handler: async (args) => {
      const { store } = await ctx.currentBucket();
      const lib = await import('@podmin/cli-feature-deploy');
      const result = await lib[spec.operation](store, {
        nodegroup: args.nodegroup,
        name: args.name,
      });
      ctx.reporter.info(result.message);
      ctx.reporter.result(result.key);
    },
  });
}
