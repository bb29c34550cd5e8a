import type { CliProviderFactory } from './cli-provider';

/**
 * The aws provider: an S3 bucket, SSM and Secrets Manager, and OpenTofu/Terraform for the
 * cluster's VPC, NodeGroups and NAT64. Heavy modules load only when a method runs.
 */
export const awsProvider: CliProviderFactory = (ctx) => {
  const bucketAccess = async () =>
    (await import('@podmin/cli-data-access-cluster')).s3BucketAccess(ctx.env);
  return {
    connect: async () => ({
      ...(await import('@podmin/cli-feature-context')).awsConnectRules,
      openBucket: async (location) => (await bucketAccess()).openBucketProvisioner(location),
    }),
    openObjectStore: async (context) => (await bucketAccess()).openObjectStore(context),
    secretStores: (context) => async (provider) => {
      const { awsSecretStoreOpener } = await import('@podmin/cli-feature-secrets');
      return awsSecretStoreOpener(context, ctx.env)(provider);
    },
    lifecycle: (context) => ({
      async setup(request) {
        const { parseSetupFlags } = await import('@podmin/cli-util-infra');
        // Every flag is checked before anything runs or is written.
        const parsed = parseSetupFlags({
          ...(request.vpcCidr === undefined ? {} : { vpcCidr: request.vpcCidr }),
          nodegroup: [...(request.nodegroups ?? [])],
          ...(request.nat64 === undefined ? {} : { nat64: request.nat64 }),
          ...(request.workloadCaPublish === undefined
            ? {}
            : { workloadCaPublish: request.workloadCaPublish }),
          ...(request.otelLogs === undefined ? {} : { otelLogs: request.otelLogs }),
        });
        const { setupDeps, checkAgentSource } = await import('./aws-infra-deps');
        if (request.agentSource !== undefined) checkAgentSource(request.agentSource);
        const { setupAwsCluster } = await import('@podmin/cli-feature-infra');
        await setupAwsCluster(
          parsed,
          await setupDeps(ctx, context, request.assumeYes, request.agentSource),
        );
      },
      async teardown(request) {
        const { infraDeps } = await import('./aws-infra-deps');
        const { teardownAwsCluster } = await import('@podmin/cli-feature-infra');
        await teardownAwsCluster(await infraDeps(ctx, context, request.assumeYes));
      },
      async destroy(request) {
        const { infraDeps } = await import('./aws-infra-deps');
        const { destroyAwsCluster } = await import('@podmin/cli-feature-infra');
        const { destroySetupSecrets } = await import('@podmin/cli-feature-secrets');
        const { disconnect } = await import('@podmin/cli-feature-context');
        const base = await infraDeps(ctx, context, request.assumeYes);
        await destroyAwsCluster({
          ...base,
          deleteSystemSecrets: async () => {
            const store = await ctx.secretStores(context)('aws-parameter-store');
            await destroySetupSecrets(store, context.cluster);
          },
          deleteBucket: async () =>
            (await (await bucketAccess()).openBucketProvisioner(context)).deleteBucket(),
          removeContext: () => disconnect(context.cluster, ctx),
        });
      },
    }),
    // Nodes are VMs: their log files are read on the node, or where log export sends them.
    containerLogs: async (context, nodegroup) => {
      const { readLogExport, awsLogGuidance } = await import('./aws-log-export');
      const logExport = await readLogExport(() => ctx.openBucket(context), context.cluster);
      return { guidance: awsLogGuidance(context.cluster, nodegroup, logExport) };
    },
  };
};

export { awsLogGuidance } from './aws-log-export';
