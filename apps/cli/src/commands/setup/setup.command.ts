import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
import type { ClusterContext } from '@podmin/cli-util-config';
import type { LocalNodeLayout, NodeStackBinaries } from '@podmin/cli-feature-local-node';
import type { CliContext } from '../../cli-context';

interface SetupArgs {
  nodegroup: string;
  'workload-ca-publish'?: string;
}

/** `podmin setup`: create or update the cluster (the local provider: start this machine's node). */
export function setupCommand(ctx: CliContext): CommandModule<object, SetupArgs> {
  return {
    command: 'setup',
    describe: 'Create or update the cluster; on the local provider, start this machine as a node',
    builder: (y) =>
      y
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          default: 'default',
          describe: 'NodeGroup this machine serves (local provider)',
        })
        .option('workload-ca-publish', {
          type: 'string',
          describe:
            'Also keep the workload CA bundle (PEM) at this exact S3 object: s3://BUCKET/KEY',
        })
        .example('$0 setup', 'Store the cluster CAs and start podmin-agent for NodeGroup default')
        .example('$0 setup -g workers', 'Serve NodeGroup workers instead'),
    handler: async (args) => {
      const context = await ctx.contexts.current();
      if (context.provider !== 'local') {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `setting up ${context.cluster}: AWS infrastructure (OpenTofu/Terraform) is not part of this version yet`,
          {
            hint: 'use a local context (`podmin connect demo --provider local`) to run a node on this machine',
          },
        );
      }
      const { storeSetupSecrets, secretStoreOpener, localSecretsFile } =
        await import('@podmin/cli-feature-secrets');
      const { createClusterCa, serializeClusterCaSecret } = await import('@podmin/util-pki');
      const store = await secretStoreOpener(context, ctx.env, ctx.dirs.data)('aws-parameter-store');
      const secrets = await storeSetupSecrets(store, context.cluster, {
        workloadCaKey: randomBytes(32),
        clusterCa: serializeClusterCaSecret(await createClusterCa(context.cluster, new Date())),
      });
      for (const name of secrets.created) ctx.reporter.info(`Stored ${name} (create-only)`);
      for (const name of secrets.kept) ctx.reporter.info(`Kept existing ${name}`);
      const { startLocalNode, findNodeStackBinaries, localNodeAddress } =
        await import('@podmin/cli-feature-local-node');
      const stack = findNodeStackBinaries({ PATH: ctx.env.path }, ctx.env.nodeStackBin);
      const nodeAddress = stack.binaries
        ? localNodeAddress(context.cluster, args.nodegroup)
        : undefined;
      const node = await startLocalNode(
        {
          context,
          nodegroup: args.nodegroup,
          dataDir: ctx.dirs.data,
          agentProgram: path.join(__dirname, 'podmin-agent.cjs'),
          secretsFile: localSecretsFile(ctx.dirs.data, context.cluster),
          healthAddress: ctx.env.localHealthAddress ?? '127.0.0.1:9440',
          registryListen: ctx.env.localRegistryListen ?? '127.0.0.1:5000',
          ...(args['workload-ca-publish'] !== undefined
            ? { workloadCaPublish: args['workload-ca-publish'] }
            : {}),
          ...(nodeAddress ? { nodeAddress } : {}),
        },
        ctx.reporter,
      );
      ctx.reporter.info(
        `podmin-agent is ready (pid ${node.pid}); static Pods are written to ${node.layout.manifests}`,
      );
      if (stack.binaries && nodeAddress)
        await startStack(ctx, context, node.layout, args.nodegroup, stack.binaries, nodeAddress);
      else
        ctx.reporter.info(
          `The node stack is not installed here (${stack.missing.join(', ')} missing): the agent reconciles manifests, identities and secrets and serves the registry, but no Pods run. Build it with tools/node-stack/build.sh and set PODMIN_NODE_STACK_BIN.`,
        );
      ctx.reporter.result(node.layout.root);
    },
  };
}

const PAUSE_SOURCE = 'registry.k8s.io/pause:3.10';

/**
 * With kubelet, containerd and the rest of the node stack installed (PATH or
 * PODMIN_NODE_STACK_BIN): mirrors the sandbox image and starts CoreDNS, containerd and kubelet
 * against the agent's static-Pod directory.
 */
async function startStack(
  ctx: CliContext,
  context: ClusterContext,
  layout: LocalNodeLayout,
  nodegroup: string,
  binaries: NodeStackBinaries,
  nodeAddress: string,
): Promise<void> {
  const { startNodeStack, localPodPrefix } = await import('@podmin/cli-feature-local-node');
  const { DependencyImageMirror, RegistryClient } = await import('@podmin/cli-feature-image');
  const { LocalImageStore } = await import('@podmin/cli-data-access-image-store');
  const mirror = new DependencyImageMirror({
    store: LocalImageStore.inCache(ctx.dirs.cache),
    registry: new RegistryClient(),
    reporter: ctx.reporter,
  });
  const image = {
    name: 'pause',
    version: '3.10',
    source: PAUSE_SOURCE,
    path: 'mirror/registry.k8s.io/pause',
  };
  try {
    const { digest, size } = await mirror.resolve(image);
    const { store } = await ctx.currentBucket();
    const outcome = await mirror.ensurePublished(store, {
      version: image.version,
      source: image.source,
      path: image.path,
      digest,
      size,
    });
    ctx.reporter.info(`Sandbox image ${PAUSE_SOURCE} at ${image.path}: ${outcome}`);
  } catch (err) {
    ctx.reporter.warn(
      `not starting kubelet: the sandbox image ${PAUSE_SOURCE} is not available (${err instanceof Error ? err.message : String(err)}); build it with \`podmin build tools/node-stack/pause -t ${PAUSE_SOURCE}\``,
    );
    return;
  }
  await startNodeStack(
    {
      layout,
      binaries,
      registryListen: ctx.env.localRegistryListen ?? '127.0.0.1:5000',
      podPrefix: localPodPrefix(context.cluster, nodegroup),
      nodeAddress,
      systemReservedMemory: '496Mi',
    },
    ctx.reporter,
  );
}
