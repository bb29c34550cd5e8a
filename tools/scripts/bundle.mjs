#!/usr/bin/env node
// Bundles an app into one executable CommonJS file under dist/bin with esbuild.
//   node tools/scripts/bundle.mjs cli|agent
// Dynamic import() of a library becomes a lazily evaluated module inside the one file, so
// command handlers load their implementation (and the AWS SDK) only when they run.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const targets = {
  cli: { entry: 'apps/cli/src/main.ts', out: 'dist/bin/podmin.cjs' },
  agent: { entry: 'apps/agent/src/main.ts', out: 'dist/bin/podmin-agent.cjs' },
  'agent-registry': {
    entry: 'apps/agent-registry/src/main.ts',
    out: 'dist/bin/agent-registry.cjs',
    // Optional NestJS peers, loaded lazily inside try/catch and unused by an HTTP-only app.
    external: [
      '@nestjs/microservices',
      '@nestjs/websockets',
      '@nestjs/websockets/*',
      'class-transformer',
      'class-validator',
    ],
  },
};
const name = process.argv[2];
const target = targets[name];
if (!target) {
  process.stderr.write(`usage: bundle.mjs ${Object.keys(targets).join('|')}\n`);
  process.exit(2);
}
const outfile = path.join(root, target.out);
const result = await build({
  entryPoints: [path.join(root, target.entry)],
  outfile,
  bundle: true,
  external: target.external ?? [],
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  tsconfig: path.join(root, 'tsconfig.base.json'),
  banner: { js: '#!/usr/bin/env node' },
  define: { __PODMIN_VERSION__: JSON.stringify(pkg.version) },
  legalComments: 'none',
  minifySyntax: true,
  minifyWhitespace: true,
  keepNames: true,
  metafile: true,
  logLevel: 'warning',
});
fs.chmodSync(outfile, 0o755);
const bytes = fs.statSync(outfile).size;
fs.writeFileSync(`${outfile}.meta.json`, JSON.stringify(result.metafile));
process.stdout.write(`bundled ${target.out} (${(bytes / 1024).toFixed(0)} KiB)\n`);
