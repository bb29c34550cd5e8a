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
// Optional NestJS peers, loaded lazily inside try/catch and unused by podmin's processes.
const NEST_OPTIONAL = [
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  '@nestjs/platform-express',
  'class-transformer',
  'class-validator',
  'kafkajs',
  'mqtt',
  'nats',
  'ioredis',
  'amqplib',
  'amqp-connection-manager',
];
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
  'agent-staticpod': {
    entry: 'apps/agent-staticpod/src/main.ts',
    out: 'dist/bin/agent-staticpod.cjs',
    grpc: true,
  },
  'agent-identity': {
    entry: 'apps/agent-identity/src/main.ts',
    out: 'dist/bin/agent-identity.cjs',
    grpc: true,
  },
};
const name = process.argv[2];
const target = targets[name];
if (!target) {
  process.stderr.write(`usage: bundle.mjs ${Object.keys(targets).join('|')}\n`);
  process.exit(2);
}
const outfile = path.join(root, target.out);
const binDir = path.dirname(outfile);

// gRPC service processes load .proto files at run time: ship them in dist/bin/proto, and point
// grpc-health-check (which resolves its proto beside its own source) at that directory too.
const plugins = [];
if (target.grpc) {
  fs.cpSync(path.join(root, 'libs/agent/contracts/proto'), path.join(binDir, 'proto'), {
    recursive: true,
  });
  fs.cpSync(path.join(root, 'node_modules/grpc-health-check/proto'), path.join(binDir, 'proto'), {
    recursive: true,
  });
  plugins.push({
    name: 'grpc-health-check-proto',
    setup(b) {
      b.onLoad({ filter: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/ }, (args) => ({
        contents: fs
          .readFileSync(args.path, 'utf8')
          .replaceAll('`${__dirname}/../../proto`', 'require("path").join(__dirname, "proto")')
          .replaceAll(
            "path.resolve(__dirname, '../../proto/health/v1/health.proto')",
            'require("path").join(__dirname, "proto/health/v1/health.proto")',
          ),
        loader: 'js',
      }));
    },
  });
}
const result = await build({
  entryPoints: [path.join(root, target.entry)],
  outfile,
  bundle: true,
  external: target.external ?? (target.grpc ? NEST_OPTIONAL : []),
  plugins,
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
