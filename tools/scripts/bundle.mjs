#!/usr/bin/env node
// Bundles an app into one executable CommonJS file under dist/bin with esbuild.
//   node tools/scripts/bundle.mjs cli|agent|agent-registry|agent-staticpod|agent-identity|agent-coordinator|agent-dns|agent-dataplane
// Writes <out> and <out>.meta.json; `bundle.mjs proto` writes dist/bin/proto and dist/bin/koffi
// (see below). Each file belongs to exactly one Nx build target, whose `outputs` must name it,
// or a build served from the Nx cache lacks it (tools/check-build-outputs.sh proves they do).
// Agent bundles are one file each: dynamic import() of a library becomes a lazily evaluated
// module inside it.
//
// The CLI (target.split) is a small loader, dist/bin/podmin.cjs, and chunks in
// dist/bin/podmin.chunks/ (buildSplit below), because every start paid for the whole program:
// as one 4.8 MB file compiled through a V8 code cache (the program a string literal in the
// loader) `podmin validate -f` took 2.65× a bare `node -e 0` and 92 MiB, `--help` 2.55× and
// 95 MiB, a deploy to a local bucket 3.71× (bench/cli-start.mjs, 20 paired runs), most of it
// scanning, deserialising and holding the AWS SDK clients, the image, infra and dependency
// code and the embedded module that those commands never run. Command handlers import their
// libraries with import(), so a command now reads and compiles the chunks it runs and no
// others. Each step, as ratios from bench/cli-start.mjs (this machine is shared, two vCPUs at a
// load of 10 to 30 while measured, so the wall times swing) and as user-space instructions
// counted by valgrind's cachegrind, which the load does not change (`node -e 0`: 502 M):
//   one file, one code cache:            validate 2.65× 1102 M, --help 2.55× 1039 M, 92 MiB
//   chunks, each with a code cache:      validate 1.56×  675 M, --help 1.49×, 52 MiB
//     (the same chunks by plain require, without a cache: validate 816 M, --help 721 M)
//   + built-ins required on first use:   validate 668 M, --help 653 M
//   + AWS SDK clients as own entries:    deploy 2.48×: 1.6 MB of chunks read → 0.5 MB, 56 MiB
//   + string-width's ASCII fast path:    validate 651 M, --help 609 M
//   + standard streams on first use:     validate 636 M, --help 606 M
//   + strip-ansi's fast path, all of it: validate 1.38×, --help 1.25×, deploy 1.99×; 47, 45 and
//     55 MiB (20 pairs, load 31: `node -e 0` took 331 ms); at load 8 (178 ms) 1.65×, 1.43×
//     and 2.10×: the ratios grow as the machine quietens, validate and deploy over budget.
//     What is left of validate: yaml parsing and canonical stringifying (util-manifest), the
//     help yargs renders for the command on every run, code-cache deserialisation, scavenges.
//   Next steps, counted with each command's cache written by validate first, as the bench does
//   (validate 637 M, --help 590 M, deploy 740 M before them; `node -e 0` 500 to 509 M):
//   + yargs' unused help cache, ansi-styles: validate 628 M, --help 605 M (its help layout was
//     no longer in the cache validate wrote), deploy 725 M
//   + a code cache per command:            validate 625 M, --help 592 M, deploy 716 M
//   + stand-ins with the imported names:   deploy 661 M, 54.5 → 48 MiB
//   + one YAML parse (util-manifest):      validate 617 M
//     bench at loads 12 to 15 (`node -e 0` 285 and 404 ms): validate 1.62× and 1.55×, --help
//     1.25× and 1.42×, deploy 1.46× and 2.25×; 47, 45 and 48 MiB. Before them, at loads 1 to 8
//     (257 and 338 ms): 1.59× and 1.50×, 1.51× and 1.76×, 2.04× and 2.06×; 48, 45 and 54 MiB.
//     Left of validate: canonical stringifying of the Pod and Service (for the payload limit),
//     creating process.stdout (yargs reads its columns at load; node:stream and its modules),
//     yargs' instance and parse, reading and deserialising 0.5 MB of code cache.
// The chunks are CommonJS: split as ES modules and imported as such they took validate 2.15×,
// --help 1.97×, as Node.js 20 has no code cache for ES modules (module.enableCompileCache is
// Node.js 22) and its ES module loader alone cost more than the budget leaves.
import { build, transform } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

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
const KOFFI_PLATFORMS = ['linux_x64', 'linux_arm64'];
/** Copies koffi's native modules to <dir>/<platform>/koffi.node. */
const copyKoffi = (dir) => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const platform of KOFFI_PLATFORMS) {
    const from = path.join(root, 'node_modules/koffi/build/koffi', platform, 'koffi.node');
    fs.mkdirSync(path.join(dir, platform), { recursive: true });
    fs.copyFileSync(from, path.join(dir, platform, 'koffi.node'));
  }
};
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
  const entries = artifactEntries();
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
// The CLI splits instead (target.awsSdkEntries): each client is an entry point of its own, so
// its code and the SDK code it shares with the other clients are chunks, and the stand-in's
// getters require that entry through the chunk loader. A deploy to a local bucket then loads
// none of it, although the object-store library it opens also holds the S3 store. Each file
// importing a client gets a stand-in of its own with the names it imports (importedNames):
// one with all of client-s3's thousand names cost a deploy to a local bucket 9 M instructions
// to define and as many again for esbuild's __toESM to copy, for the S3 store it never opens.
const AWS_SDK_ENTRY = 'podmin-aws-sdk-entry:';
const awsEntryName = (client) => client.replace(/^@aws-sdk\//, 'aws-sdk-');
if (target.awsSdkEntries) {
  plugins.push({
    name: 'aws-sdk-entries',
    setup(b) {
      b.onResolve({ filter: /^@aws-sdk\/client-[a-z0-9-]+$/ }, (args) =>
        args.importer.includes(`${path.sep}node_modules${path.sep}`) ||
        args.namespace === 'aws-sdk-entry'
          ? undefined
          : {
              path: `${args.path}|${path.relative(root, args.importer)}`,
              namespace: 'lazy-aws-sdk',
            },
      );
      // The stand-in's require() of the client's entry stays a require() the loader serves.
      b.onResolve(
        { filter: /^\.\/aws-sdk-client-[a-z0-9-]+\.cjs$/, namespace: 'lazy-aws-sdk' },
        (args) => ({
          path: args.path,
          external: true,
        }),
      );
      b.onResolve({ filter: new RegExp(`^${AWS_SDK_ENTRY}`) }, (args) => ({
        path: args.path.slice(AWS_SDK_ENTRY.length),
        namespace: 'aws-sdk-entry',
      }));
      b.onLoad({ filter: /.*/, namespace: 'aws-sdk-entry' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});\n`,
        loader: 'js',
        resolveDir: root,
      }));
      b.onLoad({ filter: /.*/, namespace: 'lazy-aws-sdk' }, (args) => {
        const [client, importer] = args.path.split('|');
        const all = Object.keys(require(client));
        const names = importedNames(fs.readFileSync(path.join(root, importer), 'utf8'), client);
        return {
          contents: standIn(
            `require(${JSON.stringify(`./${awsEntryName(client)}.cjs`)})`,
            names === undefined ? all : all.filter((n) => names.has(n)),
            true,
          ),
          loader: 'js',
          resolveDir: root,
        };
      });
    },
  });
}

/**
 * The names `source` imports from `module` as values, or undefined (take every export) unless
 * each mention of the module is a named import: `import { A, type B, C as D } from 'module'`.
 * Type-only names are not exports at run time and drop out against the module's own list.
 */
function importedNames(source, module) {
  const quoted = module.replace(/[/.-]/g, '\\$&');
  const mentions = source.match(new RegExp(`['"]${quoted}['"]`, 'g'))?.length ?? 0;
  const imports = [
    ...source.matchAll(
      new RegExp(`\\bimport\\s+(type\\s+)?\\{([^}]*)\\}\\s*from\\s*['"]${quoted}['"]`, 'g'),
    ),
  ];
  if (imports.length !== mentions) return undefined;
  const names = new Set();
  for (const [, typeOnly, list] of imports) {
    if (typeOnly) continue;
    for (const item of list.split(',').map((i) => i.trim())) {
      if (item !== '' && !/^type\s/.test(item)) names.add(item.split(/\s+as\s+/)[0]);
    }
  }
  return names;
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
// Every agent process loads koffi (libc's madvise, to give back start-up pages:
// libs/agent/data-access-memory), and agent-dataplane calls libbpf through it. koffi's native
// module is a prebuilt .node file per platform, required from koffi's own build/ directory.
// Bundled, those requires point at dist/bin/koffi/<platform>/koffi.node instead, which
// `bundle.mjs proto` copies (Linux x64 and arm64, the node architectures). The committed eBPF
// objects go to dist/bin/bpf/, among agent-dataplane:build's outputs.
/** Points koffi's native requires at `<bin>/koffi/<platform>/koffi.node` beside the bundle. */
function koffiBesideBundle() {
  return {
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
  };
}
if (target.koffi) plugins.push(koffiBesideBundle());
// Node.js built-in modules outside its startup snapshot cost start time when first required
// (measured one by one, in a script: crypto 6.8 ms, assert 3.6, fs/promises 2.7, readline and
// readline/promises 1.5 together), yet the CLI's start path imports them at module level only
// for the few commands that use them. An import of one resolves to a stand-in whose exports
// are getters requiring the real module on first use, as the AWS SDK clients' above.
// yargs reads assert.notStrictEqual and strictEqual when it loads (its shim), and node:assert
// brings stream and more with it. These two throw an error of their own, with node:assert's
// code, and load nothing: yargs' constructor looks for a package.json above the bundle (to
// guess a version podmin then replaces) and a failing notStrictEqual is how it learns there is
// none, on every run; loading node:assert for that error, its AssertionError's colours and
// with them process.stderr cost `podmin validate` 1.8 ms of its ~67 (40 paired runs).
const YARGS_ASSERT = `"use strict";
const fail = (message, text) => {
  if (message instanceof Error) throw message;
  throw Object.assign(new Error(message === undefined ? text : String(message)), { code: "ERR_ASSERTION" });
};
exports.notStrictEqual = (actual, expected, message) => { if (Object.is(actual, expected)) fail(message, "Expected values to be strictly unequal: " + String(actual)); };
exports.strictEqual = (actual, expected, message) => { if (!Object.is(actual, expected)) fail(message, "Expected values to be strictly equal: " + String(actual) + " !== " + String(expected)); };
`;
if (target.lazyBuiltins) {
  const filter = new RegExp(`^(?:node:)?(?:${target.lazyBuiltins.join('|')})$`);
  plugins.push({
    name: 'lazy-builtins',
    setup(b) {
      // The stand-in's own require() is of the real module; import() is lazy already.
      b.onResolve({ filter }, (args) =>
        args.namespace === 'lazy-builtin' ||
        args.namespace === 'yargs-assert' ||
        args.kind === 'dynamic-import'
          ? undefined
          : {
              path: args.path.replace(/^(?!node:)/, 'node:'),
              namespace:
                /^(?:node:)?assert$/.test(args.path) &&
                /[\\/]node_modules[\\/]yargs[\\/]/.test(args.importer)
                  ? 'yargs-assert'
                  : 'lazy-builtin',
            },
      );
      b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
        contents: standIn(`require(${JSON.stringify(args.path)})`, Object.keys(require(args.path))),
        loader: 'js',
        resolveDir: root,
      }));
      b.onLoad({ filter: /.*/, namespace: 'yargs-assert' }, () => ({
        contents: YARGS_ASSERT,
        loader: 'js',
        resolveDir: root,
      }));
    },
  });
}
// yargs lays out every help text through cliui, which measures each word (and, wrapping, each
// prefix of a word) with string-width; string-width strips ANSI codes with a RegExp built anew
// each call and runs emoji-regex's 10 KB pattern over every string it measures, about 15 µs a
// call, and a help text takes hundreds of calls: 100 calls took 14.5 ms in a new process.
// yargs renders the help of the command it runs on every run (to show it on a failure), so this
// was most of what `podmin --help`, `validate` and `deploy` spent in yargs. A string of
// printable ASCII characters has no ANSI code, emoji, control, combining or wide character, so
// its width is its length; and a string without ESC or CSI has no ANSI code to strip (the fast
// path of strip-ansi 7, which cliui's CommonJS copies predate). Other strings take the old path.
const FAST_PATHS = [
  {
    file: /[\\/]node_modules[\\/]string-width[\\/]index\.js$/,
    slow: 'const stringWidth = string => {',
    fast: "const stringWidth = string => {\n\tif (typeof string === 'string' && /^[\\x20-\\x7e]*$/.test(string)) return string.length;",
  },
  {
    file: /[\\/]node_modules[\\/](?:[^\\/]+[\\/]node_modules[\\/])?strip-ansi[\\/]index\.js$/,
    slow: "module.exports = string => typeof string === 'string' ? string.replace(ansiRegex(), '') : string;",
    fast: "module.exports = string => typeof string === 'string' ? (/[\\u001B\\u009B]/.test(string) ? string.replace(ansiRegex(), '') : string) : string;",
  },
  // yargs lays out the help of the command it runs right after starting the command's handler,
  // and keeps it for a failure of the handler to show. podmin's fail callback (apps/cli/src/
  // cli.ts) rethrows a handler's failure without help and yargs swallows what the callback
  // throws there, so that help is never shown, and laying it out was a fifth of what validate
  // and deploy spent in yargs. Help for a usage error, found before the handler, is unchanged.
  {
    file: /[\\/]node_modules[\\/]yargs[\\/]build[\\/]index\.cjs$/,
    slow: 't||r.getInternalMethods().getUsageInstance().cacheHelpMessage(),',
    fast: '',
    // yargs' shim reads stdout's columns when it loads, which creates process.stdout and loads
    // node:stream with its dozen modules (2.4 ms of `podmin validate`'s CPU profile), only to
    // find no columns when stdout is not a terminal. Only a terminal has columns; a file, pipe,
    // socket or /dev/null has none, told by fstat (node:tty's isatty would load node:net).
    also: [
      [
        'stdColumns:void 0!==process.stdout.columns?process.stdout.columns:null',
        'stdColumns:(()=>{try{const fs=require("node:fs"),s=fs.fstatSync(1);if(!s.isCharacterDevice()||s.rdev===fs.statSync("/dev/null").rdev)return null}catch{return null}return void 0!==process.stdout.columns?process.stdout.columns:null})()',
      ],
    ],
  },
  // wrap-ansi reads ansi-styles only for strings with escape codes, yet building its tables
  // (colour conversions for every model) at load was 4.6 ms of a deploy's CPU profile (100 µs samples).
  {
    file: /[\\/]node_modules[\\/]wrap-ansi[\\/]index\.js$/,
    slow: "const ansiStyles = require('ansi-styles');",
    fast: "let ansiStylesModule;\nconst ansiStyles = { get codes() { return (ansiStylesModule ??= require('ansi-styles')).codes; } };",
  },
];
if (target.split) {
  plugins.push({
    name: 'help-layout-fast-paths',
    setup(b) {
      for (const { file, slow, fast, also = [] } of FAST_PATHS) {
        b.onLoad({ filter: file }, (args) => {
          let source = fs.readFileSync(args.path, 'utf8');
          // An ES module copy (strip-ansi 7) has its own fast path; a changed CommonJS one fails.
          if (!source.includes(slow) && /^import /m.test(source)) return undefined;
          for (const [from, to] of [[slow, fast], ...also]) {
            if (!source.includes(from))
              throw new Error(`${args.path}: no \`${from}\` to add a fast path to`);
            source = source.replace(from, to);
          }
          return { contents: source, loader: 'js' };
        });
      }
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
/** What every bundle of this script is: Node.js 20 code, minified but keeping names, with its metafile. */
const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  minifySyntax: true,
  minifyWhitespace: true,
  keepNames: true,
  metafile: true,
  logLevel: 'warning',
};
const options = {
  ...NODE_BUNDLE,
  external: target.external ?? (target.grpc ? NEST_OPTIONAL : []),
  plugins,
  tsconfig: path.join(root, 'tsconfig.base.json'),
  define: { __PODMIN_VERSION__: JSON.stringify(pkg.version) },
};
const result = target.split
  ? await buildSplit(options)
  : await build({
      ...options,
      entryPoints: [path.join(root, target.entry)],
      outfile,
      format: 'cjs',
      banner: { js: '#!/usr/bin/env node' },
    });
if (target.lazyAwsSdk) await embedAwsClients(outfile);
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

/**
 * Bundles the AWS SDK clients the output imports into one CommonJS program (exports keyed by
 * package name) and puts it, as a string literal, where the lazy-aws-sdk marker is.
 */
async function embedAwsClients(file) {
  const code = fs.readFileSync(file, 'utf8');
  const markers = code.split(AWS_SDK_MARKER).length - 1;
  // No marker: every stand-in was tree-shaken away (the process never opens an AWS client).
  if (awsClients.size === 0 || markers === 0) return;
  if (markers !== 1) throw new Error(`${file}: expected the lazy AWS SDK marker exactly once`);
  const names = [...awsClients].sort();
  const sdk = await build({
    stdin: {
      contents: `module.exports = {\n${names.map((n) => `  ${JSON.stringify(n)}: require(${JSON.stringify(n)}),`).join('\n')}\n};\n`,
      resolveDir: root,
      sourcefile: 'aws-sdk-clients.js',
      loader: 'js',
    },
    ...NODE_BUNDLE,
    write: false,
    format: 'cjs',
  });
  // What the embedded clients bundled, for the release's SBOM (tools/release/agent-sbom.mjs).
  fs.writeFileSync(`${file}.aws-sdk.meta.json`, JSON.stringify(sdk.metafile));
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
 * A CommonJS module standing in for another: its exports `names` are getters evaluating
 * `load` (an expression) on first use. The names are one string: a thousand of them (an AWS
 * SDK client's) as defineProperty statements were 90 KiB the chunk loading them had to read.
 */
function standIn(load, names, esModule = false) {
  const list = names.filter((n) => n !== '__esModule' && /^[\w$]+$/.test(n)).sort();
  return `"use strict";
let m;
const real = () => (m ??= ${load});
${esModule ? 'Object.defineProperty(exports, "__esModule", { value: true });\n' : ''}for (const n of ${JSON.stringify(list.join(' '))}.split(" ")) Object.defineProperty(exports, n, { enumerable: true, get: () => real()[n] });
`;
}

/**
 * Builds the CLI as a small loader (`outfile`) and a directory of chunks beside it, named after
 * the loader (`podmin.cjs` → `podmin.chunks/`): each command's implementation is a chunk the
 * loader reads and compiles only when the command's handler imports it (see the top of this
 * file for why). esbuild splits ESM output only, so the chunks are split as ESM and each is then
 * turned into CommonJS, its import() into require(): Node.js 20 has no code cache for ES
 * modules, and its ES module loader alone cost more start time than the budget leaves.
 */
async function buildSplit(options) {
  const chunkDir = outfile.replace(/\.c?js$/, '') + '.chunks';
  const split = await build({
    ...options,
    entryPoints: {
      main: path.join(root, target.entry),
      ...(target.awsSdkEntries
        ? Object.fromEntries(
            Object.keys(pkg.dependencies)
              .filter((d) => /^@aws-sdk\/client-/.test(d))
              .map((d) => [awsEntryName(d), AWS_SDK_ENTRY + d]),
          )
        : {}),
    },
    outdir: chunkDir,
    outExtension: { '.js': '.cjs' },
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    splitting: true,
    write: false,
  });
  // A stale chunk of an earlier build must not survive: the Nx output is the whole directory.
  fs.rmSync(chunkDir, { recursive: true, force: true });
  fs.mkdirSync(chunkDir, { recursive: true });
  const { createHash } = require('node:crypto');
  const chunks = {};
  for (const file of split.outputFiles) {
    // esbuild's ESM chunk of a CommonJS module that is only import()ed (or an entry) exports
    // the module as `default` alone, where Node.js gives its named exports too, as the
    // unsplit bundle did: `const { mkdir } = await import(...)` found no mkdir. The chunk's
    // CommonJS exports become the module's own.
    const text = file.text.replace(
      /\bexport default (require_[\w$]+)\(\);?(\s*)$/,
      'module.exports = $1();$2',
    );
    if (/\bexport default require_/.test(text))
      throw new Error(`${file.path}: unexpected CommonJS chunk`);
    const { code } = await transform(text, {
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      // import() of another chunk becomes require() of it, which the loader serves.
      supported: { 'dynamic-import': false },
      logOverride: { 'commonjs-variable-in-esm': 'silent' },
      minifySyntax: true,
      minifyWhitespace: true,
      legalComments: 'none',
      logLevel: 'warning',
    });
    const name = path.basename(file.path);
    fs.writeFileSync(path.join(chunkDir, name), code);
    chunks[name] = createHash('sha256').update(code).digest('hex').slice(0, 16);
  }
  fs.writeFileSync(outfile, splitLoader(path.basename(chunkDir), chunks, commands()));
  shipCodeCache(chunks);
  return split;
}

/**
 * The code cache shipped with the CLI (`<out>.v8/` beside the loader, an Nx output of cli:build):
 * the first run after install found no cache and compiled every chunk it ran, then serialised a
 * cache for each, 1.92× a bare `node -e 0` for `podmin validate` against 1.4× with the cache
 * (issue 35). The build runs the CLI it just wrote once per command (the common commands for
 * real, on a scratch manifest and a local bucket in a temporary HOME; every other command with
 * --help) with an empty cache directory, and keeps what those runs wrote. The files are named
 * as in the user's cache directory (chunk content, command, Node.js version, architecture);
 * V8 itself rejects one made by another V8 build or with other V8 flags, and the loader then
 * compiles and writes the user's own cache as before. So a build restored from the Nx cache on
 * another Node.js version (cli:build's inputs name the version, so it is not) would still run.
 */
function shipCodeCache(chunks) {
  const { spawnSync } = require('node:child_process');
  const os = require('node:os');
  const shipped = outfile.replace(/\.c?js$/, '') + '.v8';
  fs.rmSync(shipped, { recursive: true, force: true });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-code-cache-'));
  try {
    // Only what a user's shell has: NODE_OPTIONS would change V8's flags, and the cache with them.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'c'),
      XDG_DATA_HOME: path.join(home, 'd'),
      XDG_CACHE_HOME: path.join(home, 'k'),
      COLUMNS: '100',
    };
    const run = (...args) =>
      spawnSync(process.execPath, [outfile, ...args], {
        cwd: home,
        env,
        stdio: 'ignore',
        timeout: 60_000,
      }).status;
    // Real runs first: a command's cache is written by its first run and holds what that ran.
    const trained = new Set(['init', 'validate', 'connect', 'deploy', 'list', 'status', 'history']);
    run('init', 'web', '-g', 'default', '--image', 'hello:v1', '--service');
    run('validate', '-f', 'daemonset.yaml');
    run('connect', 'build', '--provider', 'local', '--bucket', path.join(home, 'bucket'));
    run(
      'deploy',
      '--no-preflight',
      'web',
      '-g',
      'default',
      '-f',
      'daemonset.yaml',
      '--image',
      'web=hello:v2',
    );
    run('list');
    run('status');
    run('history', 'web', '-g', 'default');
    run('--help');
    for (const command of commands()) if (!trained.has(command)) run(command, '--help');
    const written = path.join(home, 'k', 'podmin', 'v8');
    const names = new Set(Object.values(chunks));
    fs.mkdirSync(shipped, { recursive: true });
    let count = 0;
    for (const file of fs.existsSync(written) ? fs.readdirSync(written).sort() : []) {
      // Only caches of this build's chunks (by the content hash in the name) made by this Node.js.
      const m = /^podmin-([0-9a-f]{16})-[\w-]+-(v[\d.]+)-(\w+)\.bin$/.exec(file);
      if (!m || !names.has(m[1]) || m[2] !== process.version || m[3] !== process.arch) continue;
      fs.copyFileSync(path.join(written, file), path.join(shipped, file));
      count++;
    }
    if (count === 0) throw new Error(`${shipped}: the CLI's runs wrote no code cache`);
    process.stdout.write(`shipped ${count} code cache files in ${path.relative(root, shipped)}\n`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** The CLI's top-level command names: each has a code cache of its own (splitLoader). */
function commands() {
  return fs
    .readdirSync(path.join(root, target.commandsDir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .concat('completion')
    .sort();
}

/**
 * The loader: runs `main.cjs` of the chunk directory and every chunk it requires through
 * vm.Script with a V8 code cache: the user's, kept in the Podmin cache directory (one file per
 * chunk and command, keyed by its content, the command, Node.js version and architecture),
 * else the one the build shipped beside the loader (shipCodeCache); written to the user's
 * directory at exit for each chunk that had no usable one. Chunks see the loader's directory as __dirname, where the
 * other bundles are. Without a usable cache a chunk compiles normally; a chunk can also be
 * required without the loader.
 *
 * A cache holds the functions the run that wrote it compiled, and V8 compiles the others when
 * they are first called, as if there were no cache. With one cache per chunk, the first command
 * ever run decided it for all: after a first `--help`, every `validate` compiled yargs' parser
 * and command code itself again, 100 M instructions more than with its own cache (724 M against
 * 623 M; `node -e 0`: 500 M). So `commands` (the top-level command names) each have their own,
 * and any other invocation (`--help`, a typo) shares one.
 */
function splitLoader(chunkDirName, chunks, commands) {
  return `#!/usr/bin/env node
"use strict";
// podmin: loads the CLI's chunks in ${chunkDirName}/ on demand through a V8 code cache (tools/scripts/bundle.mjs).
const CHUNKS = ${JSON.stringify(chunks)}, COMMANDS = ${JSON.stringify(commands)};
const fs = require("node:fs"), path = require("node:path"), vm = require("node:vm"), Module = require("node:module");
const dir = path.join(__dirname, ${JSON.stringify(chunkDirName)});
const env = process.env, xdg = env.XDG_CACHE_HOME, home = () => require("node:os").homedir();
const cacheDir = path.join(xdg && path.isAbsolute(xdg) ? path.join(xdg, "podmin") : process.platform === "linux" ? path.join(home(), ".cache", "podmin") : path.join(home(), ".podmin", "cache"), "v8");
// The cache the build made (shipCodeCache), read when the user's cache has no file of a chunk:
// the user's directory exists only once a run wrote to it, so mostly it is not searched at all.
const shippedDir = path.join(__dirname, ${JSON.stringify(chunkDirName.replace(/\.chunks$/, '.v8'))}), userCache = fs.existsSync(cacheDir);
const loaded = Object.create(null), uncached = [];
const word = process.argv.slice(2).find((a) => !a.startsWith("-")), command = COMMANDS.includes(word) ? word : "_";
const chunkRequire = Object.assign((id) => id.startsWith("./") && Object.hasOwn(CHUNKS, id.slice(2)) ? load(id.slice(2)) : require(id), require);
function load(name) {
  if (loaded[name] !== undefined) return loaded[name].exports;
  const file = path.join(dir, name), mod = (loaded[name] = { exports: {}, id: file, filename: file });
  const cacheName = "podmin-" + CHUNKS[name] + "-" + command + "-" + process.version + "-" + process.arch + ".bin", cacheFile = path.join(cacheDir, cacheName);
  let cachedData;
  if (userCache) try { cachedData = fs.readFileSync(cacheFile); } catch {}
  if (cachedData === undefined) try { cachedData = fs.readFileSync(path.join(shippedDir, cacheName)); } catch {}
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) uncached.push([script, cacheFile]);
  script.runInThisContext().call(mod.exports, mod.exports, chunkRequire, mod, file, __dirname);
  return mod.exports;
}
// At exit the cache holds every function the run compiled, not only the top level.
process.once("exit", () => {
  for (const [script, cacheFile] of uncached) {
    try {
      fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      const tmp = cacheFile + "." + process.pid + ".tmp";
      fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(tmp, cacheFile);
    } catch {}
  }
});
load("main.cjs");
`;
}

/**
 * What the agent artifact holds, as tar entries in archive order (directories before their
 * files, all sorted): every agent bundle, the DNS UDP worker, the eBPF objects, koffi's native
 * modules and the .proto files, each read from dist/bin. The list comes from the same tables
 * the bundle steps write from, not from what dist/bin happens to hold, so a file a process
 * loads that is missing fails the pack instead of shipping a node that cannot start.
 */
function artifactEntries() {
  const bin = path.join(root, 'dist/bin');
  const files = [];
  for (const t of AGENT_TARGETS) {
    files.push(path.basename(targets[t].out));
    if (targets[t].udpWorker) files.push('agent-dns-udp.cjs');
    if (targets[t].bpf) {
      for (const obj of fs.readdirSync(path.join(root, 'bpf/obj')).filter((n) => n.endsWith('.o')))
        files.push(`bpf/${obj}`);
    }
  }
  for (const platform of KOFFI_PLATFORMS) files.push(`koffi/${platform}/koffi.node`);
  const walk = (dir, prefix) =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((d) =>
        d.isDirectory()
          ? walk(path.join(dir, d.name), `${prefix}${d.name}/`)
          : [`${prefix}${d.name}`],
      );
  files.push(
    ...walk(path.join(root, 'libs/agent/contracts/proto'), 'proto/'),
    ...walk(path.join(root, 'node_modules/grpc-health-check/proto'), 'proto/'),
  );
  const unique = [...new Set(files)].sort();
  const missing = unique.filter(
    (f) => !fs.statSync(path.join(bin, f), { throwIfNoEntry: false })?.isFile(),
  );
  if (missing.length > 0) {
    process.stderr.write(
      `packing the agent artifact: dist/bin lacks ${missing.join(', ')} (run \`nx run agent:artifact\`, which builds them, or \`bundle.mjs artifact --build\`)\n`,
    );
    process.exit(1);
  }
  const dirs = new Set();
  for (const f of unique) {
    for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  }
  return [
    ...[...dirs].map((d) => ({ type: 'directory', name: `${d}/` })),
    ...unique.map((f) => ({ type: 'file', name: f, from: path.join(bin, f) })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Writes the entries as dist/artifact/podmin-agent-v<version>.tar.gz and its `.sha512`
 * checksum file (`<hex>  <name>`, as the release publishes it beside the archive); returns
 * the archive's path. The directory is the Nx output: an earlier version's archive goes.
 */
async function writeArtifact(entries) {
  const { pack } = require('tar-stream');
  const { gzipSync, constants } = require('node:zlib');
  const { createHash } = require('node:crypto');
  const tar = pack();
  const chunks = [];
  tar.on('data', (c) => chunks.push(c));
  const ended = new Promise((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const fixed = { mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
  for (const e of entries) {
    if (e.type === 'directory') {
      tar.entry({ ...fixed, name: e.name, type: 'directory', mode: 0o755 });
    } else {
      const body = fs.readFileSync(e.from);
      const mode = e.name.endsWith('.cjs') ? 0o755 : 0o644;
      await new Promise((resolve, reject) =>
        tar.entry({ ...fixed, name: e.name, mode, size: body.length }, body, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    }
  }
  tar.finalize();
  await ended;
  const gz = gzipSync(Buffer.concat(chunks), { level: constants.Z_BEST_COMPRESSION });
  // zlib writes mtime 0 already; the OS byte depends on the platform zlib was built for.
  gz[9] = 3;
  const dir = path.join(root, 'dist/artifact');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `podmin-agent-v${pkg.version}.tar.gz`);
  fs.writeFileSync(file, gz);
  const hex = createHash('sha512').update(gz).digest('hex');
  fs.writeFileSync(`${file}.sha512`, `${hex}  ${path.basename(file)}\n`);
  return file;
}
