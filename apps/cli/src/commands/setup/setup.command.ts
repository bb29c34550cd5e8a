import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
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
      const { startLocalNode, findNodeStack } = await import('@podmin/cli-feature-local-node');
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
        },
        ctx.reporter,
      );
      ctx.reporter.info(
        `podmin-agent is ready (pid ${node.pid}); static Pods are written to ${node.layout.manifests}`,
      );
      const stack = findNodeStack();
      if (!stack.kubelet || !stack.containerd) {
        ctx.reporter.info(
          `kubelet and containerd are not both installed here (${[!stack.kubelet && 'kubelet', !stack.containerd && 'containerd'].filter(Boolean).join(', ')} missing): the agent reconciles manifests, identities and secrets, serves the registry, but no Pods run.`,
        );
      }
      ctx.reporter.result(node.layout.root);
    },
  };
}
