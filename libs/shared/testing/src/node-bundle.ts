import path from 'node:path';
import { buildSync } from 'esbuild';
import { repoRoot } from './repo-root';

/**
 * Bundles the TypeScript module `entryPoint` (with the workspace's `@podmin/*` paths) into one
 * CommonJS file at `outfile`, for a spec that runs the real module in a child `node` process.
 */
export function bundleForNode(entryPoint: string, outfile: string): void {
  buildSync({
    entryPoints: [entryPoint],
    outfile,
    tsconfig: path.join(repoRoot(), 'tsconfig.base.json'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'error',
  });
}
