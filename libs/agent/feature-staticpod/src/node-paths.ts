import path from 'node:path';

/** Where the reconciler reads and writes on the node, under a root (`/` on a real node). */
export interface NodePaths {
  root: string;
  /** Podmin-owned static-Pod directory kubelet watches. */
  manifests: string;
  /** tmpfs subtree with each Pod's identity and secret files. */
  workloads: string;
  /** Persistent node state (e.g. the last signed desired-state generation applied). */
  state: string;
}

/**
 * The node layout under `root`: `<root>/etc/podmin/manifests`, `<root>/run/podmin/workloads`,
 * `<root>/var/lib/podmin`.
 */
export function nodePaths(root: string): NodePaths {
  return {
    root,
    manifests: path.join(root, 'etc', 'podmin', 'manifests'),
    workloads: path.join(root, 'run', 'podmin', 'workloads'),
    state: path.join(root, 'var', 'lib', 'podmin'),
  };
}
