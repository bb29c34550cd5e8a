import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** Where one local node lives under the Podmin data directory. */
export interface LocalNodeLayout {
  /** Node root mirroring a VM's paths (`<root>/etc/podmin/manifests`, `<root>/run/podmin/workloads`, …). */
  root: string;
  manifests: string;
  workloads: string;
  pidFile: string;
  stateFile: string;
  logFile: string;
}

/** The layout of the local node of a cluster and NodeGroup. */
export function localNodeLayout(
  dataDir: string,
  cluster: string,
  nodegroup: string,
): LocalNodeLayout {
  const root = path.join(dataDir, 'nodes', cluster, nodegroup);
  return {
    root,
    manifests: path.join(root, 'etc', 'podmin', 'manifests'),
    workloads: path.join(root, 'run', 'podmin', 'workloads'),
    pidFile: path.join(root, 'run', 'podmin', 'agent.pid'),
    stateFile: path.join(root, 'run', 'podmin', 'agent.json'),
    logFile: path.join(root, 'var', 'log', 'podmin-agent.log'),
  };
}

/** A stable unique-local /80 Pod prefix for a local node: fd00::/8 + 72 bits of SHA-256(cluster/nodegroup). */
export function localPodPrefix(cluster: string, nodegroup: string): string {
  const h = createHash('sha256').update(`${cluster}/${nodegroup}`).digest();
  const groups = [
    0xfd00 | (h[0] as number),
    h.readUInt16BE(1),
    h.readUInt16BE(3),
    h.readUInt16BE(5),
    h.readUInt16BE(7),
  ];
  return `${groups.map((g) => g.toString(16)).join(':')}::/80`;
}

/**
 * The local node's address: a stable unique-local /128 (fd00::/8 + 120 bits of
 * SHA-256("node/" + cluster/nodegroup)) that setup adds to `lo` when it runs the node stack,
 * standing in for a VM's global IPv6 address (CoreDNS binds it; Pods use it as DNS server).
 */
export function localNodeAddress(cluster: string, nodegroup: string): string {
  const h = createHash('sha256').update(`node/${cluster}/${nodegroup}`).digest();
  const groups = [0xfd00 | (h[0] as number)];
  for (let i = 1; i < 15; i += 2) groups.push(h.readUInt16BE(i));
  return groups.map((g) => g.toString(16)).join(':');
}

/** NodeGroups that have a local node directory for a cluster. */
export async function localNodeGroups(dataDir: string, cluster: string): Promise<string[]> {
  try {
    return (await fsp.readdir(path.join(dataDir, 'nodes', cluster))).sort();
  } catch {
    return [];
  }
}
