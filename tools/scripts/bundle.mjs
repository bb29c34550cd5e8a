#!/usr/bin/env node
// Bundles an app into one executable CommonJS file under dist/bin with esbuild.
//   node tools/scripts/bundle.mjs cli|agent|agent-registry|agent-staticpod|agent-identity|agent-coordinator|agent-dns|agent-dataplane
// Writes <out> and <out>.meta.json; `bundle.mjs proto` writes dist/bin/proto and dist/bin/koffi
// (see below). Each file belongs to exactly one Nx build target, whose `outputs` must name it,
// or a build served from the Nx cache lacks it (tools/check-build-outputs.sh proves they do).
// Agent bundles are one file each: dynamic import() of a library becomes a lazily evaluated
// module inside it.
//
// The parts: bundle/common.mjs (root, esbuild options, koffi), bundle/lazy-modules.mjs (stand-ins
// for the AWS SDK clients and Node.js built-ins), bundle/patches.mjs (plugins changing what a
// dependency does once bundled), bundle/split.mjs (the CLI's loader, chunks and code cache) and
// bundle/artifact.mjs (the agent artifact).
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifactEntries, writeArtifact } from './bundle/artifact.mjs';
import { copyKoffi, NODE_BUNDLE, pkg, root } from './bundle/common.mjs';
import { awsSdkEntries, lazyAwsSdk, lazyBuiltins } from './bundle/lazy-modules.mjs';
import {
  embedInfraModule,
  grpcHealthCheckProto,
  helpLayoutFastPaths,
  koffiBesideBundle,
  lazyNestDateFormat,
} from './bundle/patches.mjs';
import { buildSplit } from './bundle/split.mjs';

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
  cli: {
    entry: 'apps/cli/src/main.ts',
    out: 'dist/bin/podmin.cjs',
    split: true,
    awsSdkEntries: true,
    lazyBuiltins: ['crypto', 'assert', 'fs/promises', 'readline', 'readline/promises'],
    infraModule: 'infra/aws',
    // Each directory is a command; the loader keeps a code cache per command (splitLoader).
    commandsDir: 'apps/cli/src/commands',
  },
  agent: {
    entry: 'apps/agent/src/main.ts',
    out: 'dist/bin/podmin-agent.cjs',
    // The supervisor uses the contracts' message types only: nothing of NestJS reaches its
    // output (libs/agent/contracts/package.json marks the contracts free of side effects), but
    // esbuild still resolves the optional peers before dropping them.
    external: NEST_OPTIONAL,
    // Only `podmin-agent otel-logs-config` reads a secret store; the supervisor never does.
    lazyAwsSdk: true,
    koffi: true,
  },
  'agent-registry': {
    entry: 'apps/agent-registry/src/main.ts',
    out: 'dist/bin/agent-registry.cjs',
    grpc: true,
    lazyAwsSdk: true,
    // The registry serves HTTP through Express as well as its gRPC socket.
    external: NEST_OPTIONAL.filter((m) => m !== '@nestjs/platform-express'),
    koffi: true,
  },
  'agent-staticpod': {
    entry: 'apps/agent-staticpod/src/main.ts',
    out: 'dist/bin/agent-staticpod.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
  },
  'agent-identity': {
    entry: 'apps/agent-identity/src/main.ts',
    out: 'dist/bin/agent-identity.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
  },
  'agent-coordinator': {
    entry: 'apps/agent-coordinator/src/main.ts',
    out: 'dist/bin/agent-coordinator.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
  },
  'agent-dns': {
    entry: 'apps/agent-dns/src/main.ts',
    out: 'dist/bin/agent-dns.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
    udpWorker: true,
  },
  'agent-dataplane': {
    entry: 'apps/agent-dataplane/src/main.ts',
    out: 'dist/bin/agent-dataplane.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
    bpf: true,
  },
};
// podmin-agent and every service process it supervises: what the agent artifact packs.
const AGENT_TARGETS = Object.keys(targets).filter((t) => t === 'agent' || t.startsWith('agent-'));
const name = process.argv[2];
// gRPC service processes load .proto files at run time from proto/ beside their bundle. Both
// service bundles need the same directory, so one target (agent-contracts:build, which they
// depend on) writes it: two Nx targets declaring one output would race when restored from cache.
// koffi's native modules are shared the same way (every agent process loads koffi; see below).
const PROTO_OUT = 'dist/bin/proto';
const KOFFI_OUT = 'dist/bin/koffi';
if (name === 'proto') {
  const out = path.join(root, PROTO_OUT);
  fs.rmSync(out, { recursive: true, force: true });
  fs.cpSync(path.join(root, 'libs/agent/contracts/proto'), out, { recursive: true });
  fs.cpSync(path.join(root, 'node_modules/grpc-health-check/proto'), out, { recursive: true });
  copyKoffi(path.join(root, KOFFI_OUT));
  process.stdout.write(
    `copied the agent and gRPC health .proto files to ${PROTO_OUT} and koffi's native modules to ${KOFFI_OUT}\n`,
  );
  process.exit(0);
}
// `bundle.mjs artifact [--build]`: the one dependency artifact a node installs (DESIGN §2):
// dist/artifact/podmin-agent-v<version>.tar.gz holds podmin-agent.cjs and every service program
// it supervises, agent-dns's UDP worker, proto/, koffi/ (both platforms) and bpf/, flat, so
// user-data extracts it as /opt/podmin/agent/. It is packed from dist/bin as the build targets
// left it (`nx run agent:artifact` depends on them); `--build` runs those bundle steps first,
// which is what `--agent-source <checkout>` runs. Deterministic: sorted entries, mtime 0, owner
// 0:0 without names, modes 0755/0644, gzip level 9 with mtime 0 and OS byte 3, so the same
// dist/bin always gives the same digest.
if (name === 'artifact') {
  if (process.argv.includes('--build')) {
    const { execFileSync } = await import('node:child_process');
    for (const step of ['proto', ...AGENT_TARGETS]) {
      execFileSync(process.execPath, [fileURLToPath(import.meta.url), step], {
        cwd: root,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    }
  }
  const entries = artifactEntries(AGENT_TARGETS.map((t) => targets[t]));
  const out = await writeArtifact(entries);
  process.stdout.write(
    `packed ${entries.filter((e) => e.type === 'file').length} files into ${path.relative(root, out)}\n`,
  );
  process.exit(0);
}
const target = targets[name];
if (!target) {
  process.stderr.write(`usage: bundle.mjs ${[...Object.keys(targets), 'proto'].join('|')}\n`);
  process.exit(2);
}
// Tests bundle elsewhere, with another module: PODMIN_BUNDLE_OUT and PODMIN_BUNDLE_INFRA_MODULE.
const outfile = path.resolve(root, process.env.PODMIN_BUNDLE_OUT || target.out);
const binDir = path.dirname(outfile);

// The plugins, in this order (the first whose onLoad answers wins); each is described where it
// is defined.
const plugins = [];
if (target.grpc) {
  // Point grpc-health-check (which resolves its proto beside its own source) at proto/ beside
  // the bundle, where `bundle.mjs proto` puts it.
  if (!fs.existsSync(path.join(binDir, 'proto', 'health', 'v1', 'health.proto'))) {
    process.stderr.write(
      `warning: ${path.relative(root, binDir)}/proto is missing: run \`node tools/scripts/bundle.mjs proto\` (nx run agent-contracts:build)\n`,
    );
  }
  plugins.push(grpcHealthCheckProto());
}
const awsSdk = target.lazyAwsSdk ? lazyAwsSdk() : undefined;
if (awsSdk) plugins.push(awsSdk.plugin);
if (target.awsSdkEntries) plugins.push(awsSdkEntries());
if (target.grpc) plugins.push(lazyNestDateFormat());
if (target.koffi) plugins.push(koffiBesideBundle());
if (target.lazyBuiltins) plugins.push(lazyBuiltins(target.lazyBuiltins));
if (target.split) plugins.push(helpLayoutFastPaths());
if (target.infraModule) {
  const dir = path.resolve(root, process.env.PODMIN_BUNDLE_INFRA_MODULE || target.infraModule);
  plugins.push(embedInfraModule(dir, target.infraModule));
}
const options = {
  ...NODE_BUNDLE,
  external: target.external ?? (target.grpc ? NEST_OPTIONAL : []),
  plugins,
  tsconfig: path.join(root, 'tsconfig.base.json'),
  define: { __PODMIN_VERSION__: JSON.stringify(pkg.version) },
};
const result = target.split
  ? await buildSplit(options, { ...target, outfile })
  : await build({
      ...options,
      entryPoints: [path.join(root, target.entry)],
      outfile,
      format: 'cjs',
      banner: { js: '#!/usr/bin/env node' },
    });
if (awsSdk) await awsSdk.embed(outfile);
// A bundle written elsewhere (PODMIN_BUNDLE_OUT, for tests and benchmarks) gets its own copy:
// no Nx target owns that directory.
if (target.koffi && process.env.PODMIN_BUNDLE_OUT) copyKoffi(path.join(binDir, 'koffi'));
if (target.udpWorker) await buildDnsUdpWorker(binDir);
if (target.bpf) {
  const bin = path.dirname(outfile);
  fs.mkdirSync(path.join(bin, 'bpf'), { recursive: true });
  for (const obj of fs.readdirSync(path.join(root, 'bpf/obj')).filter((n) => n.endsWith('.o')))
    fs.copyFileSync(path.join(root, 'bpf/obj', obj), path.join(bin, 'bpf', obj));
}
fs.chmodSync(outfile, 0o755);
const bytes = fs.statSync(outfile).size;
fs.writeFileSync(`${outfile}.meta.json`, JSON.stringify(result.metafile));
process.stdout.write(`bundled ${target.out} (${(bytes / 1024).toFixed(0)} KiB)\n`);

/**
 * agent-dns answers UDP from a worker thread reading its socket with recvmmsg through koffi
 * (libs/agent/feature-dns/src/udp-worker.ts, where the numbers are): the worker runs a file,
 * so it is a bundle of its own, agent-dns-udp.cjs, holding only the zone code and koffi (a
 * worker evaluating all of agent-dns.cjs would hold NestJS and gRPC in its heap too). It loads
 * the same koffi/ native modules as every agent bundle. Without either file agent-dns falls
 * back to Node's dgram socket.
 */
async function buildDnsUdpWorker(bin) {
  const worker = await build({
    ...NODE_BUNDLE,
    entryPoints: [path.join(root, 'libs/agent/feature-dns/src/udp-worker.ts')],
    outfile: path.join(bin, 'agent-dns-udp.cjs'),
    plugins: [koffiBesideBundle()],
    format: 'cjs',
    tsconfig: path.join(root, 'tsconfig.base.json'),
  });
  // What it bundled, for the release's SBOM (tools/release/agent-sbom.mjs); not packed.
  fs.writeFileSync(path.join(bin, 'agent-dns-udp.cjs.meta.json'), JSON.stringify(worker.metafile));
}
