import path from 'node:path';
import type { CommandModule } from 'yargs';
import { PodminError } from '@podmin/util-errors';
import type { ClusterContext } from '@podmin/cli-util-config';
import type { LocalNodeLayout, NodeStackBinaries } from '@podmin/cli-feature-local-node';
import type { CliContext } from '../../cli-context';

interface SetupArgs {
  nodegroup?: string[];
  'vpc-cidr'?: string;
  nat64?: string;
  yes?: boolean;
  'workload-ca-publish'?: string;
}

/** `podmin setup`: create or update the cluster (the local provider: start this machine's node). */
export function setupCommand(ctx: CliContext): CommandModule<object, SetupArgs> {
  return {
    command: 'setup',
    describe:
      'Create or update the cluster (AWS: VPC, NodeGroups, NAT64 through OpenTofu/Terraform); on the local provider, start this machine as a node',
    builder: (y) =>
      y
        .option('vpc-cidr', {
          type: 'string',
          describe:
            'AWS, required: the private IPv4 CIDR of the VPC (10/8, 172.16/12 or 192.168/16, /16 to /28); an untagged compatible VPC with exactly this primary CIDR is reused, none means one is created',
        })
        .option('nodegroup', {
          alias: 'g',
          type: 'string',
          array: true,
          describe:
            'AWS, repeatable and authoritative: NAME[,size=N,disk-size=GIB,instance-type=T,zone=Z,nat64=T] (defaults size=1, disk-size=20 (8..16384), instance-type=t4g.small, zone = first available; zone is a full name or one letter; nat64=T gives the NodeGroup a dedicated NAT64 instance). Local: the one NodeGroup this machine serves (default: default)',
        })
        .option('nat64', {
          type: 'string',
          describe:
            "AWS: EC2-backed NAT64 (stateful Jool) shared per zone; bare uses t4g.nano, --nat64=instance-type=TYPE another type. Setup reads each NAT64 AMI's kernel from Debian's image manifest and mirrors the matching podplane/jool-builds modules into the bucket; every setup replaces the NAT64 instances (launch before terminate)",
        })
        .option('yes', {
          alias: 'y',
          type: 'boolean',
          describe: 'Apply without asking (required when there is no terminal)',
        })
        .option('workload-ca-publish', {
          type: 'string',
          describe:
            'Also keep the workload CA bundle (PEM) at this exact S3 object: s3://BUCKET/KEY',
        })
        .example(
          '$0 setup --vpc-cidr 10.0.0.0/16 --nat64 --nodegroup default --nodegroup workers,size=3,disk-size=100,instance-type=c8g.large,zone=b,nat64=t4g.small',
          'AWS: a VPC, two NodeGroups and NAT64 (shared in zone a, dedicated for workers in zone b)',
        )
        .example('$0 setup --vpc-cidr 10.0.0.0/16 -g default -y', 'AWS: apply without asking')
        .example(
          '$0 setup',
          'Local: store the cluster CAs and start podmin-agent for NodeGroup default',
        )
        .example('$0 setup -g workers', 'Local: serve NodeGroup workers instead')
        .epilogue(
          'On AWS, setup checks the flags and the provider first, publishes the node dependencies, writes the module and its inputs under <podmin cache>/infrastructure/<cluster> and to tfstate/podmin.auto.tfvars.json in the bucket, stores the workload and cluster CAs create-only, then runs OpenTofu/Terraform (PODMIN_TF_CMD, else tofu, else terraform; 1.11 or newer) init, plan and, after confirmation, apply. Providers are cached in <podmin cache>/tf-plugins unless TF_PLUGIN_CACHE_DIR is set.',
        ),
    handler: async (args) => {
      const context = await ctx.contexts.current();
      if (context.provider === 'aws') {
        const { parseSetupFlags } = await import('@podmin/cli-util-infra');
        // Every flag is checked before anything runs or is written.
        const request = parseSetupFlags({
          ...(args['vpc-cidr'] === undefined ? {} : { vpcCidr: args['vpc-cidr'] }),
          nodegroup: args.nodegroup ?? [],
          ...(args.nat64 === undefined ? {} : { nat64: args.nat64 }),
        });
        const { setupDeps } = await import('../infra-deps');
        const { setupAwsCluster } = await import('@podmin/cli-feature-infra');
        await setupAwsCluster(request, await setupDeps(ctx, context, args.yes === true));
        return;
      }
      const localOnly = (['vpc-cidr', 'nat64'] as const).filter((f) => args[f] !== undefined);
      const nodegroups = args.nodegroup ?? ['default'];
      if (localOnly.length > 0 || nodegroups.length !== 1) {
        throw new PodminError(
          'INVALID_ARGUMENT',
          `setting up ${context.cluster}: the local provider serves exactly one --nodegroup and takes no ${localOnly.map((f) => `--${f}`).join(', ') || 'infrastructure flags'}`,
        );
      }
      const nodegroup = nodegroups[0] as string;
      const { localSecretsFile } = await import('@podmin/cli-feature-secrets');
      const { storeSystemSecrets } = await import('../infra-deps');
      await storeSystemSecrets(ctx, context);
      const { startLocalNode, findNodeStackBinaries, localNodeAddress, addNodeAddress } =
        await import('@podmin/cli-feature-local-node');
      const stack = findNodeStackBinaries({ PATH: ctx.env.path }, ctx.env.nodeStackBin);
      const nodeAddress = stack.binaries ? localNodeAddress(context.cluster, nodegroup) : undefined;
      // The agent's coordination listens on the node address, so it must exist before the agent
      // starts (setup waits for the agent to be ready before starting the node stack).
      if (nodeAddress) await addNodeAddress(nodeAddress);
      const node = await startLocalNode(
        {
          context,
          nodegroup,
          dataDir: ctx.dirs.data,
          agentProgram: path.join(__dirname, 'podmin-agent.cjs'),
          secretsFile: localSecretsFile(ctx.dirs.data, context.cluster),
          healthAddress: ctx.env.localHealthAddress ?? '127.0.0.1:9440',
          registryListen: ctx.env.localRegistryListen ?? '127.0.0.1:5000',
          dnsListen: ctx.env.localDnsListen ?? '127.0.0.1:1053',
          ...(ctx.env.localCoordinationPort
            ? { coordinationPort: ctx.env.localCoordinationPort }
            : {}),
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
        await startStack(ctx, context, node.layout, nodegroup, stack.binaries, nodeAddress);
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
      dnsListen: ctx.env.localDnsListen ?? '127.0.0.1:1053',
      podPrefix: localPodPrefix(context.cluster, nodegroup),
      nodeAddress,
      systemReservedMemory: '496Mi',
    },
    ctx.reporter,
  );
}
