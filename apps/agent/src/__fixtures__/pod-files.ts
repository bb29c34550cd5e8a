import fs from 'node:fs';
import path from 'node:path';

/**
 * Every file a node holds for its Pods (manifests, identities, secrets) by path below
 * `nodeRoot`, with its text; a symbolic link as `-> <target>`, never followed (so a linked
 * directory's files count once, under their real directory).
 */
export function podFilesOf(nodeRoot: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(nodeRoot, p)] = fs.readFileSync(p, 'utf8');
      else if (e.isSymbolicLink()) out[path.relative(nodeRoot, p)] = `-> ${fs.readlinkSync(p)}`;
    }
  };
  walk(path.join(nodeRoot, 'etc/podmin/manifests'));
  walk(path.join(nodeRoot, 'run/podmin/workloads'));
  return out;
}
