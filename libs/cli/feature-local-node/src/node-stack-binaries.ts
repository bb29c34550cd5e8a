import fs from 'node:fs';
import path from 'node:path';

/** The node-stack programs a local node runs Pods with. */
export interface NodeStackBinaries {
  kubelet: string;
  containerd: string;
  /** Directory holding containerd-shim-runc-v2 (put on containerd's PATH). */
  shimDir: string;
  /** Directory holding the CNI plugins ptp, host-local and loopback. */
  cniDir: string;
  /** crictl, used to remove Pods (and so their interfaces) at teardown. */
  crictl: string;
  /** CoreDNS, the Pods' resolver on the node address. */
  coredns: string;
}

/**
 * Finds kubelet, containerd, its runc shim, the CNI plugins and crictl on PATH or in
 * `extraDir` (tools/node-stack/build.sh's bin directory), plus runc on PATH; undefined when
 * any is missing (with the names of the missing ones).
 */
export function findNodeStackBinaries(
  env: Readonly<Record<string, string | undefined>>,
  extraDir?: string,
): { binaries?: NodeStackBinaries; missing: string[] } {
  const dirs = [
    ...(extraDir ? [extraDir] : []),
    ...(env['PATH'] ?? '').split(path.delimiter).filter(Boolean),
  ];
  const find = (name: string): string | undefined =>
    dirs.map((d) => path.join(d, name)).find((p) => fs.existsSync(p));
  const names = [
    'kubelet',
    'containerd',
    'containerd-shim-runc-v2',
    'ptp',
    'host-local',
    'loopback',
    'crictl',
    'coredns',
    'runc',
  ];
  const found = Object.fromEntries(names.map((n) => [n, find(n)]));
  const missing = names.filter((n) => !found[n]);
  if (missing.length > 0) return { missing };
  return {
    missing,
    binaries: {
      kubelet: found['kubelet'] as string,
      containerd: found['containerd'] as string,
      shimDir: path.dirname(found['containerd-shim-runc-v2'] as string),
      cniDir: path.dirname(found['ptp'] as string),
      crictl: found['crictl'] as string,
      coredns: found['coredns'] as string,
    },
  };
}

/** Which node-stack programs are on PATH (kubelet and containerd run Pods for real). */
export function findNodeStack(env: Readonly<Record<string, string | undefined>> = process.env): {
  kubelet?: string;
  containerd?: string;
} {
  const found: { kubelet?: string; containerd?: string } = {};
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    for (const name of ['kubelet', 'containerd'] as const) {
      const candidate = path.join(dir, name);
      if (!found[name] && fs.existsSync(candidate)) found[name] = candidate;
    }
  }
  return found;
}
