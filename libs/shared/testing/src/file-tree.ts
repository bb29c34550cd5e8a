import fs from 'node:fs';
import path from 'node:path';

/**
 * Every file below `root` (or below the `under` subdirectories of it) by its path relative to
 * `root`, with its text; a symbolic link as `-> <target>`, never followed, so a linked
 * directory's files count once, under their real directory. A missing directory adds nothing.
 */
export function fileTree(root: string, under: readonly string[] = ['.']): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(root, p)] = fs.readFileSync(p, 'utf8');
      else if (e.isSymbolicLink()) out[path.relative(root, p)] = `-> ${fs.readlinkSync(p)}`;
    }
  };
  for (const sub of under) walk(path.join(root, sub));
  return out;
}
