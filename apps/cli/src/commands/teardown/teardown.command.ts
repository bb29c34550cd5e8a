import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';

/** `podmin teardown`: stop compute; the bucket, context and CA secrets are kept. */
export function teardownCommand(ctx: CliContext): CommandModule<object, object> {
  return {
    command: 'teardown',
    describe:
      "Stop the cluster's compute (local provider: this machine's agent); bucket, context and secrets are kept",
    builder: (y) =>
      y.example('$0 teardown', 'Stop podmin-agent of every local NodeGroup of the current cluster'),
    handler: async () => {
      const context = await ctx.contexts.current();
      if (context.provider !== 'local') {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `tearing down ${context.cluster}: AWS infrastructure is not part of this version yet`,
        );
      }
      const {
        localNodeGroups,
        stopLocalNode,
        stopNodeStack,
        localNodeLayout,
        findNodeStackBinaries,
      } = await import('@podmin/cli-feature-local-node');
      const groups = await localNodeGroups(ctx.dirs.data, context.cluster);
      if (groups.length === 0) ctx.reporter.info(`No local node exists for ${context.cluster}`);
      const { binaries } = findNodeStackBinaries({ PATH: ctx.env.path }, ctx.env.nodeStackBin);
      for (const nodegroup of groups) {
        // kubelet and its Pods first, then the agent that published them.
        await stopNodeStack(
          localNodeLayout(ctx.dirs.data, context.cluster, nodegroup),
          binaries,
          ctx.reporter,
        );
        await stopLocalNode({ context, nodegroup, dataDir: ctx.dirs.data }, ctx.reporter);
      }
    },
  };
}
