// The CLI's build (bundle.mjs cli): a small loader and chunks beside it, with a V8 code cache.
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
import { AWS_SDK_ENTRY, awsEntryName } from './lazy-modules.mjs';
import { pkg, require, root } from './common.mjs';

/**
 * Builds the CLI as a small loader (`outfile`) and a directory of chunks beside it, named after
 * the loader (`podmin.cjs` → `podmin.chunks/`): each command's implementation is a chunk the
 * loader reads and compiles only when the command's handler imports it (see the top of this
 * file for why). esbuild splits ESM output only, so the chunks are split as ESM and each is then
 * turned into CommonJS, its import() into require(): Node.js 20 has no code cache for ES
 * modules, and its ES module loader alone cost more start time than the budget leaves.
 */
export async function buildSplit(options, { entry, outfile, awsSdkEntries, commandsDir }) {
  const chunkDir = outfile.replace(/\.c?js$/, '') + '.chunks';
  const split = await build({
    ...options,
    entryPoints: {
      main: path.join(root, entry),
      ...(awsSdkEntries
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
  const names = commands(commandsDir);
  fs.writeFileSync(outfile, splitLoader(path.basename(chunkDir), chunks, names));
  shipCodeCache(outfile, chunks, names);
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
function shipCodeCache(outfile, chunks, commands) {
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
    for (const command of commands) if (!trained.has(command)) run(command, '--help');
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
function commands(commandsDir) {
  return fs
    .readdirSync(path.join(root, commandsDir), { withFileTypes: true })
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
