// Bundles what a benchmark needs from the workspace's libraries into one CommonJS file and
// loads it, so benchmarks run the same code the bundled agent and CLI do.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * `lines` are the export statements of the entry (e.g. `export { DnsServer } from
 * '@podmin/agent-feature-dns';`); the bundle is written to `outfile` and required. `external`
 * names more packages to leave to `require` at run time (native modules such as koffi, which
 * then resolve through a `node_modules` beside `outfile`).
 */
export async function bundleLibraries(outfile, lines, { external = [] } = {}) {
  // Written here, not by esbuild's service process, which could still write (and recreate a
  // temporary directory) after a bench killed mid-build had removed it.
  const result = await build({
    stdin: {
      contents: ["import 'reflect-metadata';", ...lines].join('\n'),
      resolveDir: root,
      loader: 'ts',
    },
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    tsconfig: path.join(root, 'tsconfig.base.json'),
    // Optional NestJS peers the benchmarked code never loads.
    external: [
      '@nestjs/microservices',
      '@nestjs/websockets',
      'class-transformer',
      'class-validator',
      // Required lazily, where at all (the supervisor's page release, the dataplane's libbpf).
      'koffi',
      ...external,
    ],
    logLevel: 'warning',
    write: false,
  });
  for (const file of result.outputFiles) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    fs.writeFileSync(file.path, file.contents);
  }
  return createRequire(import.meta.url)(outfile);
}
