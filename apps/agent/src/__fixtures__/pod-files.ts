import { fileTree } from '@podmin/testing';

/**
 * Every file a node holds for its Pods (manifests, identities, secrets) by path below
 * `nodeRoot`, with its text; a symbolic link as `-> <target>`, never followed (so a linked
 * directory's files count once, under their real directory).
 */
export function podFilesOf(nodeRoot: string): Record<string, string> {
  return fileTree(nodeRoot, ['etc/podmin/manifests', 'run/podmin/workloads']);
}
