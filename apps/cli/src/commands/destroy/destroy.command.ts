import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
import type { CliContext } from '../../cli-context';

/** `podmin destroy`: remove the whole cluster, its bucket and CAs, then its context. */
export function destroyCommand(ctx: CliContext): CommandModule<object, { yes?: boolean }> {
  return {
    command: 'destroy',
    describe:
      'Destroy the cluster for good: its infrastructure (OpenTofu/Terraform), both CA secrets, every object and the bucket; the context is removed only after all of that succeeded',
    builder: (y) =>
      y
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe: 'Destroy without asking (required when there is no terminal)',
        })
        .example('$0 destroy', 'Ask once, then destroy the current cluster and its bucket')
        .example('$0 destroy -y', 'Destroy without asking (scripts)')
        .epilogue(
          'To hand the bucket to another owner instead, use `podmin teardown` and `podmin disconnect`; destroy deletes it.',
        ),
    handler: async (args) => {
      const context = await ctx.contexts.current();
      if (context.provider !== 'aws') {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `destroying ${context.cluster}: destroy is for AWS clusters; for a local one run podmin teardown and podmin disconnect`,
        );
      }
      const { infraDeps } = await import('../infra-deps');
      const { destroyAwsCluster } = await import('@podmin/cli-feature-infra');
      const { secretStoreOpener, destroySetupSecrets } =
        await import('@podmin/cli-feature-secrets');
      const { openBucketProvisioner } = await import('@podmin/cli-data-access-cluster');
      const { disconnect } = await import('@podmin/cli-feature-context');
      const base = await infraDeps(ctx, context, args.yes === true);
      await destroyAwsCluster({
        ...base,
        deleteSystemSecrets: async () => {
          const store = await secretStoreOpener(
            context,
            ctx.env,
            ctx.dirs.data,
          )('aws-parameter-store');
          await destroySetupSecrets(store, context.cluster);
        },
        deleteBucket: async () => (await openBucketProvisioner(context, ctx.env)).deleteBucket(),
        removeContext: () => disconnect(context.cluster, ctx),
      });
    },
  };
}
