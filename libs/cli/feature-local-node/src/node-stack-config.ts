import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from '@podmin/util-fs';
import { NODE_CONFIG_PATHS, renderNodeConfig, type NodeConfig } from '@podmin/cli-util-node-config';
import type { NodeStackBinaries } from './node-stack-binaries';
import type { LocalNodeLayout } from './node-layout';

/** The sandbox image every local node pins: the spec's mirror path of the pause image. */
export const SANDBOX_IMAGE = 'registry.podmin.internal/mirror/registry.k8s.io/pause:3.10';

/**
 * Files and sockets of the node stack under the node root (mirroring a VM's paths). Unix
 * socket paths are limited to 108 bytes, so containerd's state and kubelet's root live in a
 * short directory under the system temp dir, linked from `<root>/run/containerd` and
 * `<root>/var/lib/kubelet` so the node root still shows a VM's layout.
 */
export function nodeStackPaths(layout: LocalNodeLayout) {
  const r = layout.root;
  const short = path.join(
    os.tmpdir(),
    `podmin-${createHash('sha256').update(r).digest('hex').slice(0, 12)}`,
  );
  return {
    short,
    containerdConfig: path.join(r, NODE_CONFIG_PATHS.containerdConfig),
    hostsDir: path.join(r, 'etc/containerd/certs.d'),
    cniConf: path.join(r, 'etc/cni/net.d'),
    containerdState: path.join(short, 'containerd'),
    socket: path.join(short, 'containerd', 'containerd.sock'),
    kubeletConfig: path.join(r, NODE_CONFIG_PATHS.kubeletConfig),
    kubeletRoot: path.join(short, 'kubelet'),
    podsApiSocket: path.join(r, 'var/lib/kubelet/pods-api/pods-api.sock'),
    crictlConfig: path.join(r, NODE_CONFIG_PATHS.crictlConfig),
    corefile: path.join(r, NODE_CONFIG_PATHS.corefile),
    state: path.join(r, 'run/podmin/stack.json'),
    logDir: path.join(r, 'var/log'),
  };
}

/** Inputs of {@link startNodeStack}. */
export interface NodeStackOptions {
  layout: LocalNodeLayout;
  binaries: NodeStackBinaries;
  /** `host:port` of the agent registry containerd resolves registry.podmin.internal to. */
  registryListen: string;
  /** `host:port` of the agent's Service DNS, where CoreDNS forwards svc.cluster.local. */
  dnsListen: string;
  /** The node's /80 Pod prefix for CNI host-local. */
  podPrefix: string;
  /**
   * The node's IPv6 address (a VM's global address; locally a unique-local /128 added to
   * `lo`): CoreDNS binds port 53 on it and every Pod uses it as its DNS server.
   */
  nodeAddress: string;
  /** Memory reserved for the OS and the agent (DESIGN §6.6). */
  systemReservedMemory: string;
}

/**
 * The local node's containerd, CNI, kubelet, crictl and CoreDNS configuration: the `local`
 * profile of @podmin/cli-util-node-config (an AWS VM's differs only where that profile says).
 */
export function localNodeConfig(options: NodeStackOptions): NodeConfig {
  const p = nodeStackPaths(options.layout);
  return renderNodeConfig('local', {
    root: options.layout.root,
    containerdState: p.containerdState,
    containerdSocket: p.socket,
    cniBinDir: options.binaries.cniDir,
    kubeletRootDir: p.kubeletRoot,
    nodeAddress: options.nodeAddress,
    podPrefix: options.podPrefix,
    sandboxImage: SANDBOX_IMAGE,
    registryListen: options.registryListen,
    serviceDnsListen: options.dnsListen,
    // This machine's resolver, as the host itself uses it.
    upstreamResolvConf: '/etc/resolv.conf',
    systemReserved: { cpu: '100m', memory: options.systemReservedMemory },
    hostname: path.basename(options.layout.root),
  });
}

/** Writes every file of a rendered node configuration under the node root. */
export async function writeNodeConfig(root: string, config: NodeConfig): Promise<void> {
  for (const file of config.files) {
    await writeFileAtomic(path.join(root, file.path), file.content, {
      mode: 0o644,
      dirMode: 0o755,
    });
  }
}
