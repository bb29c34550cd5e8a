import type { CommandModule } from 'yargs';
import type { CliContext } from '../../cli-context';

/** `podmin teardown`: stop compute; the bucket, context and CA secrets are kept. */
export function teardownCommand(ctx: CliContext): CommandModule<object, { yes?: boolean }> {
  return {
    command: 'teardown',
    describe:
      "Destroy the cluster's compute and networking (AWS: through OpenTofu/Terraform; local: stop this machine's agent); bucket, context and CA secrets are kept",
    builder: (y) =>
      y
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe:
            'Destroy without asking (required when there is no terminal); a stale state lock is then reported with its force-unlock command, never forced',
        })
        .example('$0 teardown', 'AWS: plan the destruction, show it, ask, destroy')
        .example('$0 teardown -y', 'AWS: destroy without asking')
        .example('$0 teardown', 'Local: stop podmin-agent of every local NodeGroup of the cluster')
        .epilogue(
          'On AWS the module inputs are restored from tfstate/podmin.auto.tfvars.json in the bucket, so a teardown works after `podmin disconnect` and `podmin connect` too. `podmin setup` brings the cluster back with the same CAs.',
        ),
    handler: async (args) => {
      const context = await ctx.contexts.current();
      if (context.provider === 'aws') {
        const { infraDeps } = await import('../infra-deps');
        const { teardownAwsCluster } = await import('@podmin/cli-feature-infra');
        await teardownAwsCluster(await infraDeps(ctx, context, args.yes === true));
        return;
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
