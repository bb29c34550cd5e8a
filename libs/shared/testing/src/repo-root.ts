import { existsSync } from 'node:fs';
import path from 'node:path';

/** The podmin workspace root (the directory holding nx.json above this library). */
export function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'nx.json')) && existsSync(path.join(dir, 'tools'))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`finding the podmin repository root from ${__dirname}: no nx.json above it`);
  }
}
