import os from 'node:os';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import type { CliProviderFactory } from './cli-provider';
import { storeSystemSecrets } from './system-secrets';

/**
 * The local provider: a directory bucket, one secrets file, and this machine as the node
 * (podmin-agent and, when installed, the node stack). Heavy modules load only when used.
 */
export const localProvider: CliProviderFactory = (ctx) => {
  const bucketAccess = async () =>
    (await import('@podmin/cli-data-access-cluster')).directoryBucketAccess;
  return {
    connect: async () => ({
      ...(await import('@podmin/cli-feature-context')).localConnectRules,
      openBucket: async (location) => (await bucketAccess()).openBucketProvisioner(location),
    }),
    openObjectStore: async (context) => (await bucketAccess()).openObjectStore(context),
    secretStores: (context) => async (provider) => {
      const { localSecretStoreOpener } = await import('@podmin/cli-feature-secrets');
      return localSecretStoreOpener(context, ctx.dirs.data)(provider);
    },
    lifecycle: (context) => ({
      async setup(request) {
        if (request.agentSource !== undefined) {
          // The local node runs the agent bundled beside this CLI; nothing is published.
          throw new PodminError(
            'INVALID_ARGUMENT',
            `setting up ${context.cluster}: --agent-source is for AWS clusters, whose nodes install the published agent artifact`,
            {
              hint: 'Run the CLI of that checkout (npm run build there) to use its agent locally.',
            },
          );
        }
        if (request.otelLogs !== undefined) {
          // A local node is this machine: podmin installs no system packages or services here.
          throw new PodminError(
            'INVALID_ARGUMENT',
            `setting up ${context.cluster}: --otel-logs is for AWS clusters, whose nodes install and run Fluent Bit; a local node has no log collector`,
            {
              hint: `Read a deployment's container logs with \`podmin logs <name> -g <nodegroup>\`.`,
            },
          );
        }
        const { localSecretsFile } = await import('@podmin/cli-feature-secrets');
        const { setupLocalCluster } = await import('@podmin/cli-feature-local-node');
        const root = await setupLocalCluster(request, {
          reporter: ctx.reporter,
          context,
          dataDir: ctx.dirs.data,
          env: ctx.env,
          agentProgram: path.join(__dirname, 'podmin-agent.cjs'),
          secretsFile: localSecretsFile(ctx.dirs.data, context.cluster),
          storeSystemSecrets: () => storeSystemSecrets(ctx, context),
          publishSandboxImage: async (image) => {
            const { DependencyImageMirror, RegistryClient } =
              await import('@podmin/cli-feature-image');
            const mirror = new DependencyImageMirror({
              store: await ctx.imageStore(),
              registry: new RegistryClient(),
              reporter: ctx.reporter,
            });
            const { digest, size } = await mirror.resolve({ name: 'pause', ...image });
            return mirror.ensurePublished(await ctx.openBucket(context), {
              ...image,
              digest,
              size,
            });
          },
        });
        ctx.reporter.result(root);
      },
      async teardown() {
        const { teardownLocalCluster } = await import('@podmin/cli-feature-local-node');
        await teardownLocalCluster({
          reporter: ctx.reporter,
          context,
          dataDir: ctx.dirs.data,
          env: ctx.env,
        });
      },
      destroy() {
        return Promise.reject(
          new PodminError(
            'INVALID_ARGUMENT',
            `destroying ${context.cluster}: destroy is for AWS clusters; for a local one run podmin teardown and podmin disconnect`,
          ),
        );
      },
    }),
    // This machine is the NodeGroup's one node; kubelet runs with the node root's name.
    containerLogs: async (context, nodegroup) => {
      const { localNodeLayout } = await import('@podmin/cli-feature-local-node');
      const layout = localNodeLayout(ctx.dirs.data, context.cluster, nodegroup);
      return {
        nodes: [
          {
            nodeId: os.hostname(),
            nodeName: path.basename(layout.root),
            manifestsDir: layout.manifests,
            podLogDir: ctx.env.podLogDir ?? '/var/log/pods',
          },
        ],
      };
    },
  };
};
