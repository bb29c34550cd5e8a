import type { CliEnvironment, ClusterContext } from '@podmin/cli-util-config';
import type { Reporter } from '@podmin/cli-util-io';
import { PodminError } from '@podmin/util-errors';
import { startLocalNode, stopLocalNode } from './local-node';
import {
  localNodeAddress,
  localNodeGroups,
  localNodeLayout,
  localPodPrefix,
  type LocalNodeLayout,
} from './node-layout';
import { findNodeStackBinaries, type NodeStackBinaries } from './node-stack-binaries';
import { addNodeAddress, startNodeStack, stopNodeStack } from './node-stack';

/** The sandbox image kubelet needs before it can start Pods. */
export const PAUSE_SOURCE = 'registry.k8s.io/pause:3.10';

/** What the local provider's lifecycle needs from the CLI shell. */
export interface LocalClusterDeps {
  reporter: Reporter;
  context: ClusterContext;
  dataDir: string;
  env: Pick<
    CliEnvironment,
    | 'path'
    | 'nodeStackBin'
    | 'localHealthAddress'
    | 'localRegistryListen'
    | 'localDnsListen'
    | 'localCoordinationPort'
  >;
  /** The podmin-agent program to start. */
  agentProgram: string;
  /** The local secrets file the agent reads (the local provider's secret store). */
  secretsFile: string;
  /** Stores the workload and cluster CAs create-only. */
  storeSystemSecrets(): Promise<void>;
  /**
   * Mirrors the sandbox image `source` into the bucket at `path`; resolves to the outcome
   * (e.g. `published`) and rejects when the image is not available.
   */
  publishSandboxImage(image: { source: string; version: string; path: string }): Promise<string>;
}

/** `podmin setup`'s flags, as the local provider reads them. */
export interface LocalSetupRequest {
  nodegroups?: readonly string[];
  vpcCidr?: string;
  nat64?: string;
  workloadCaPublish?: string;
}

/**
 * `podmin setup` on the local provider: stores the CAs, starts podmin-agent for the one
 * NodeGroup and, with the node stack installed, the sandbox image, CoreDNS, containerd and
 * kubelet; resolves to the node's root directory.
 */
export async function setupLocalCluster(
  request: LocalSetupRequest,
  deps: LocalClusterDeps,
): Promise<string> {
  const { context, env, reporter } = deps;
  const infraFlags = [
    ...(request.vpcCidr === undefined ? [] : ['vpc-cidr']),
    ...(request.nat64 === undefined ? [] : ['nat64']),
  ];
  const nodegroups = request.nodegroups ?? ['default'];
  if (infraFlags.length > 0 || nodegroups.length !== 1) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `setting up ${context.cluster}: the local provider serves exactly one --nodegroup and takes no ${infraFlags.map((f) => `--${f}`).join(', ') || 'infrastructure flags'}`,
    );
  }
  const nodegroup = nodegroups[0] as string;
  await deps.storeSystemSecrets();
  const stack = findNodeStackBinaries({ PATH: env.path }, env.nodeStackBin);
  const nodeAddress = stack.binaries ? localNodeAddress(context.cluster, nodegroup) : undefined;
  // The agent's coordination listens on the node address, so it must exist before the agent
  // starts (setup waits for the agent to be ready before starting the node stack).
  if (nodeAddress) await addNodeAddress(nodeAddress);
  const registryListen = env.localRegistryListen ?? '127.0.0.1:5000';
  const dnsListen = env.localDnsListen ?? '127.0.0.1:1053';
  const node = await startLocalNode(
    {
      context,
      nodegroup,
      dataDir: deps.dataDir,
      agentProgram: deps.agentProgram,
      secretsFile: deps.secretsFile,
      healthAddress: env.localHealthAddress ?? '127.0.0.1:9440',
      registryListen,
      dnsListen,
      ...(env.localCoordinationPort ? { coordinationPort: env.localCoordinationPort } : {}),
      ...(request.workloadCaPublish !== undefined
        ? { workloadCaPublish: request.workloadCaPublish }
        : {}),
      ...(nodeAddress ? { nodeAddress } : {}),
    },
    reporter,
  );
  reporter.info(
    `podmin-agent is ready (pid ${node.pid}); static Pods are written to ${node.layout.manifests}`,
  );
  if (stack.binaries && nodeAddress)
    await startStack(deps, node.layout, nodegroup, stack.binaries, nodeAddress, {
      registryListen,
      dnsListen,
    });
  else
    reporter.info(
      `The node stack is not installed here (${stack.missing.join(', ')} missing): the agent reconciles manifests, identities and secrets and serves the registry, but no Pods run. Build it with tools/node-stack/build.sh and set PODMIN_NODE_STACK_BIN.`,
    );
  return node.layout.root;
}

/**
 * With kubelet, containerd and the rest of the node stack installed: mirrors the sandbox
 * image and starts CoreDNS, containerd and kubelet against the agent's static-Pod directory.
 */
async function startStack(
  deps: LocalClusterDeps,
  layout: LocalNodeLayout,
  nodegroup: string,
  binaries: NodeStackBinaries,
  nodeAddress: string,
  listen: { registryListen: string; dnsListen: string },
): Promise<void> {
  const image = { version: '3.10', source: PAUSE_SOURCE, path: 'mirror/registry.k8s.io/pause' };
  try {
    const outcome = await deps.publishSandboxImage(image);
    deps.reporter.info(`Sandbox image ${PAUSE_SOURCE} at ${image.path}: ${outcome}`);
  } catch (err) {
    deps.reporter.warn(
      `not starting kubelet: the sandbox image ${PAUSE_SOURCE} is not available (${err instanceof Error ? err.message : String(err)}); build it with \`podmin build tools/node-stack/pause -t ${PAUSE_SOURCE}\``,
    );
    return;
  }
  await startNodeStack(
    {
      layout,
      binaries,
      ...listen,
      podPrefix: localPodPrefix(deps.context.cluster, nodegroup),
      nodeAddress,
      systemReservedMemory: '496Mi',
    },
    deps.reporter,
  );
}

/** `podmin teardown` on the local provider: stops every local NodeGroup of the cluster. */
export async function teardownLocalCluster(
  deps: Pick<LocalClusterDeps, 'reporter' | 'context' | 'dataDir' | 'env'>,
): Promise<void> {
  const { context, reporter, dataDir, env } = deps;
  const groups = await localNodeGroups(dataDir, context.cluster);
  if (groups.length === 0) reporter.info(`No local node exists for ${context.cluster}`);
  const { binaries } = findNodeStackBinaries({ PATH: env.path }, env.nodeStackBin);
  for (const nodegroup of groups) {
    // kubelet and its Pods first, then the agent that published them.
    await stopNodeStack(localNodeLayout(dataDir, context.cluster, nodegroup), binaries, reporter);
    await stopLocalNode({ context, nodegroup, dataDir }, reporter);
  }
}
