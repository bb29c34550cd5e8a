#!/usr/bin/env node
// Bundles an app into one executable CommonJS file under dist/bin with esbuild.
//   node tools/scripts/bundle.mjs cli|agent|agent-registry|agent-staticpod|agent-identity|agent-coordinator|agent-dns|agent-dataplane
// Writes <out> and <out>.meta.json; `bundle.mjs proto` writes dist/bin/proto (see below). Each
// file belongs to exactly one Nx build target, whose `outputs` must name it, or a build served
// from the Nx cache lacks it (tools/check-build-outputs.sh proves they do).
// Dynamic import() of a library becomes a lazily evaluated module inside the one file, so
// command handlers load their implementation (and the AWS SDK) only when they run.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

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
  cli: {
    entry: 'apps/cli/src/main.ts',
    out: 'dist/bin/podmin.cjs',
    codeCache: true,
    infraModule: 'infra/aws',
  },
  agent: {
    entry: 'apps/agent/src/main.ts',
    out: 'dist/bin/podmin-agent.cjs',
    // The supervisor uses the contracts' message types only: nothing of NestJS reaches its
    // output (libs/agent/contracts/package.json marks the contracts free of side effects), but
    // esbuild still resolves the optional peers before dropping them.
    external: NEST_OPTIONAL,
  },
  'agent-registry': {
    entry: 'apps/agent-registry/src/main.ts',
    out: 'dist/bin/agent-registry.cjs',
    grpc: true,
    lazyAwsSdk: true,
    // The registry serves HTTP through Express as well as its gRPC socket.
    external: NEST_OPTIONAL.filter((m) => m !== '@nestjs/platform-express'),
  },
  'agent-staticpod': {
    entry: 'apps/agent-staticpod/src/main.ts',
    out: 'dist/bin/agent-staticpod.cjs',
    grpc: true,
    lazyAwsSdk: true,
  },
  'agent-identity': {
    entry: 'apps/agent-identity/src/main.ts',
    out: 'dist/bin/agent-identity.cjs',
    grpc: true,
    lazyAwsSdk: true,
  },
  'agent-coordinator': {
    entry: 'apps/agent-coordinator/src/main.ts',
    out: 'dist/bin/agent-coordinator.cjs',
    grpc: true,
    lazyAwsSdk: true,
  },
  'agent-dns': {
    entry: 'apps/agent-dns/src/main.ts',
    out: 'dist/bin/agent-dns.cjs',
    grpc: true,
    lazyAwsSdk: true,
  },
  'agent-dataplane': {
    entry: 'apps/agent-dataplane/src/main.ts',
    out: 'dist/bin/agent-dataplane.cjs',
    grpc: true,
    lazyAwsSdk: true,
    koffi: true,
  },
};
const name = process.argv[2];
// gRPC service processes load .proto files at run time from proto/ beside their bundle. Both
// service bundles need the same directory, so one target (agent-contracts:build, which they
// depend on) writes it: two Nx targets declaring one output would race when restored from cache.
const PROTO_OUT = 'dist/bin/proto';
if (name === 'proto') {
  const out = path.join(root, PROTO_OUT);
  fs.rmSync(out, { recursive: true, force: true });
  fs.cpSync(path.join(root, 'libs/agent/contracts/proto'), out, { recursive: true });
  fs.cpSync(path.join(root, 'node_modules/grpc-health-check/proto'), out, { recursive: true });
  process.stdout.write(`copied the agent and gRPC health .proto files to ${PROTO_OUT}\n`);
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

// Point grpc-health-check (which resolves its proto beside its own source) at proto/ beside
// the bundle, where `bundle.mjs proto` puts it.
const plugins = [];
if (target.grpc) {
  if (!fs.existsSync(path.join(binDir, 'proto', 'health', 'v1', 'health.proto'))) {
    process.stderr.write(
      `warning: ${path.relative(root, binDir)}/proto is missing: run \`node tools/scripts/bundle.mjs proto\` (nx run agent-contracts:build)\n`,
    );
  }
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
// Agent processes on the local provider never touch AWS, and on AWS each uses one or two
// clients; evaluating every AWS SDK client at start costs about 20 MiB of RSS each. Imports of
// `@aws-sdk/client-*` from podmin's own code therefore resolve to a stand-in whose exports are
// getters that load the real client on first use (the names are read at build time).
// The clients themselves are bundled separately and embedded as one string literal that is
// compiled only when a getter first runs: as ordinary lazily evaluated modules of the bundle
// they were still pre-parsed at start (their ~1.5 MB is most of each bundle) and kept as source.
// Measured with bench/agent.mjs (idle, local provider), as a plain string literal, which is only
// scanned, each service process's RSS fell by ≈ 3 MiB; brotli-compressed, by ≈ 2 MiB more. The
// string's place in the output is a marker replaced once the build knows which clients the
// bundle imports.
const AWS_SDK_MARKER = '"__PODMIN_LAZY_AWS_SDK_PROGRAM__"';
const awsClients = new Set();
if (target.lazyAwsSdk) {
  plugins.push({
    name: 'lazy-aws-sdk',
    setup(b) {
      b.onResolve({ filter: /^@aws-sdk\/client-[a-z0-9-]+$/ }, (args) =>
        args.importer.includes(`${path.sep}node_modules${path.sep}`)
          ? undefined
          : { path: args.path, namespace: 'lazy-aws-sdk' },
      );
      b.onResolve({ filter: /^lazy-aws-sdk-program$/ }, () => ({
        path: 'program',
        namespace: 'lazy-aws-sdk-program',
      }));
      b.onLoad({ filter: /.*/, namespace: 'lazy-aws-sdk-program' }, () => ({
        // Runs the embedded clients program once, as a CommonJS module sharing this require.
        contents: `"use strict";
let clients;
module.exports = (name) => {
  if (clients === undefined) {
    const vm = require("node:vm"), Module = require("node:module");
    const mod = { exports: {} };
    const program = require("node:zlib").brotliDecompressSync(Buffer.from(${AWS_SDK_MARKER}, "base64")).toString("utf8");
    vm.runInThisContext(Module.wrap(program), { filename: __filename + "#aws-sdk" })
      .call(mod.exports, mod.exports, require, mod, __filename, __dirname);
    clients = mod.exports;
  }
  return clients[name];
};
`,
        loader: 'js',
      }));
      b.onLoad({ filter: /.*/, namespace: 'lazy-aws-sdk' }, (args) => {
        awsClients.add(args.path);
        const names = Object.keys(require(args.path))
          .filter((n) => n !== '__esModule')
          .sort();
        const getters = names
          .map(
            (n) =>
              `Object.defineProperty(exports, ${JSON.stringify(n)}, { enumerable: true, get: () => real()[${JSON.stringify(n)}] });`,
          )
          .join('\n');
        return {
          contents: `"use strict";\nlet m;\nconst real = () => (m ??= require("lazy-aws-sdk-program")(${JSON.stringify(args.path)}));\nObject.defineProperty(exports, "__esModule", { value: true });\n${getters}\n`,
          loader: 'js',
          resolveDir: root,
        };
      });
    },
  });
}
// NestJS's two loggers build an Intl.DateTimeFormat when their module loads, to timestamp lines
// podmin never prints (its processes log through JsonLogger). Creating one maps about 5 MiB of
// ICU data from the node binary into the process (file-backed, so counted in every process's
// RSS) plus the formatter's own memory: measured with bench/agent.mjs, idle RSS of each service
// process fell by ≈ 5.5 MiB (file-backed) when the formatter is created on first format().
if (target.grpc) {
  plugins.push({
    name: 'lazy-nest-date-format',
    setup(b) {
      b.onLoad(
        { filter: /@nestjs[\\/]common[\\/]services[\\/](?:console-)?logger\.service\.js$/ },
        (args) => {
          const source = fs.readFileSync(args.path, 'utf8');
          const eager = 'const dateTimeFormatter = new Intl.DateTimeFormat(';
          // Fail the build rather than silently lose the saving when NestJS changes this line.
          if (!source.includes(eager)) throw new Error(`${args.path}: no \`${eager}\` to defer`);
          return {
            contents: source.replace(
              eager,
              'const dateTimeFormatter = ((...a) => { let f; return { format: (d) => (f ??= new Intl.DateTimeFormat(...a)).format(d) }; })(',
            ),
            loader: 'js',
          };
        },
      );
    },
  });
}
// agent-dataplane calls libbpf through koffi, whose native module is a prebuilt .node file per
// platform, required from koffi's own build/ directory. Bundled, those requires point at
// dist/bin/koffi/<platform>/koffi.node instead, which the build copies (Linux x64 and arm64, the
// node architectures), with the committed eBPF objects beside them in dist/bin/bpf/. The files
// belong to agent-dataplane:build's outputs.
const KOFFI_PLATFORMS = ['linux_x64', 'linux_arm64'];
if (target.koffi) {
  plugins.push({
    name: 'koffi-beside-bundle',
    setup(b) {
      b.onLoad({ filter: /[\\/]node_modules[\\/]koffi[\\/]index\.js$/ }, (args) => {
        const source = fs.readFileSync(args.path, 'utf8');
        const native = /require\("\.\/build\/koffi\/([a-z0-9_]+)\/koffi\.node"\)/g;
        if (!native.test(source)) throw new Error(`${args.path}: no native requires to redirect`);
        return {
          contents: source.replace(native, 'require(__dirname + "/koffi/$1/koffi.node")'),
          loader: 'js',
        };
      });
    },
  });
}
// The CLI carries the OpenTofu/Terraform module: aws-module.ts, which reads infra/aws from the
// checkout when run from source, becomes a module returning those files as string literals.
if (target.infraModule) {
  const dir = path.resolve(root, process.env.PODMIN_BUNDLE_INFRA_MODULE || target.infraModule);
  const files = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((n) => /^[A-Za-z0-9_.-]+\.(?:tf|tftpl)$/.test(n))
    .sort()
    .map((n) => ({ name: n, content: fs.readFileSync(path.join(dir, n), 'utf8') }));
  plugins.push({
    name: 'embed-infra-module',
    setup(b) {
      b.onLoad({ filter: /libs[\\/]cli[\\/]util-infra[\\/]src[\\/]aws-module\.ts$/ }, () => ({
        contents: `export function embeddedAwsModule() { return ${JSON.stringify(files)}.map((f) => ({ ...f })); }\n`,
        loader: 'ts',
      }));
    },
  });
  process.stdout.write(`embedding ${files.length} module file(s) from ${target.infraModule}\n`);
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
if (target.lazyAwsSdk) await embedAwsClients(outfile);
if (target.codeCache) wrapWithCodeCache(outfile);
if (target.koffi) {
  const bin = path.dirname(outfile);
  for (const platform of KOFFI_PLATFORMS) {
    const from = path.join(root, 'node_modules/koffi/build/koffi', platform, 'koffi.node');
    fs.mkdirSync(path.join(bin, 'koffi', platform), { recursive: true });
    fs.copyFileSync(from, path.join(bin, 'koffi', platform, 'koffi.node'));
  }
  fs.mkdirSync(path.join(bin, 'bpf'), { recursive: true });
  for (const obj of fs.readdirSync(path.join(root, 'bpf/obj')).filter((n) => n.endsWith('.o')))
    fs.copyFileSync(path.join(root, 'bpf/obj', obj), path.join(bin, 'bpf', obj));
}
fs.chmodSync(outfile, 0o755);
const bytes = fs.statSync(outfile).size;
fs.writeFileSync(`${outfile}.meta.json`, JSON.stringify(result.metafile));
process.stdout.write(`bundled ${target.out} (${(bytes / 1024).toFixed(0)} KiB)\n`);

/**
 * Bundles the AWS SDK clients the output imports into one CommonJS program (exports keyed by
 * package name) and puts it, as a string literal, where the lazy-aws-sdk marker is.
 */
async function embedAwsClients(file) {
  const code = fs.readFileSync(file, 'utf8');
  if (awsClients.size === 0) return;
  if (code.split(AWS_SDK_MARKER).length !== 2)
    throw new Error(`${file}: expected the lazy AWS SDK marker exactly once`);
  const names = [...awsClients].sort();
  const sdk = await build({
    stdin: {
      contents: `module.exports = {\n${names.map((n) => `  ${JSON.stringify(n)}: require(${JSON.stringify(n)}),`).join('\n')}\n};\n`,
      resolveDir: root,
      sourcefile: 'aws-sdk-clients.js',
      loader: 'js',
    },
    bundle: true,
    write: false,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    legalComments: 'none',
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    logLevel: 'warning',
  });
  // Brotli and base64: the literal stays in every process's heap as part of the bundle's source,
  // and compressed it is a fifth of the program's size.
  const { brotliCompressSync, constants } = require('node:zlib');
  const packed = brotliCompressSync(sdk.outputFiles[0].contents, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
  }).toString('base64');
  fs.writeFileSync(
    file,
    code.replace(AWS_SDK_MARKER, () => JSON.stringify(packed)),
  );
}

/**
 * Rewrites a bundle as one file whose program is a string compiled through vm.Script with a
 * V8 code cache kept in the Podmin cache directory. Scanning a string literal costs far less
 * than pre-parsing megabytes of code, and a cached compile is nearly free, so start time stays
 * close to a bare `node` (DESIGN.md §8). Without a usable cache it compiles normally.
 */
function wrapWithCodeCache(file) {
  // vm.Script has no dynamic-import loader without --experimental-vm-modules, so the few
  // import("node:…") calls left in dependencies become require() with a namespace shape.
  const program = fs
    .readFileSync(file, 'utf8')
    .replace(/^#!.*\n/, '')
    .replace(
      /\bimport\(("node:[a-z_/]+")\)/g,
      'Promise.resolve().then(() => { const m = require($1); return Object.assign({ default: m }, m); })',
    );
  if (/\bimport\(/.test(program.replace(/\.import\(|\bimport\(param|\bimport\(data/g, ''))) {
    process.stderr.write(
      `warning: ${file} still contains dynamic import() calls that a code-cached program cannot run\n`,
    );
  }
  const { createHash } = require('node:crypto');
  const key = createHash('sha256').update(program).digest('hex').slice(0, 16);
  const loader = `#!/usr/bin/env node
"use strict";
// podmin: the bundled program below runs through a V8 code cache (tools/scripts/bundle.mjs).
const PROGRAM = ${JSON.stringify(program)};
(() => {
  const fs = require("node:fs"), path = require("node:path"), os = require("node:os"), vm = require("node:vm"), Module = require("node:module");
  const env = process.env, xdg = env.XDG_CACHE_HOME;
  const cacheRoot = xdg && path.isAbsolute(xdg) ? path.join(xdg, "podmin") : process.platform === "linux" ? path.join(os.homedir(), ".cache", "podmin") : path.join(os.homedir(), ".podmin", "cache");
  const cacheFile = path.join(cacheRoot, "v8", "podmin-${key}-" + process.version + "-" + process.arch + ".bin");
  let cachedData;
  try { cachedData = fs.readFileSync(cacheFile); } catch {}
  const script = new vm.Script(Module.wrap(PROGRAM), { filename: __filename, cachedData, importModuleDynamically: vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once("exit", () => {
      try {
        fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
        const tmp = cacheFile + "." + process.pid + ".tmp";
        fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(tmp, cacheFile);
      } catch {}
    });
  }
  script.runInThisContext().call(module.exports, module.exports, require, module, __filename, __dirname);
})();
`;
  fs.writeFileSync(file, loader);
}
