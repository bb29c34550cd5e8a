// esbuild plugins that change what a dependency does once bundled, each measured or needed where
// it is described: files it loads from beside the bundle, work it does at load that podmin never
// uses, and the OpenTofu module the CLI carries. Used by bundle.mjs.
import fs from 'node:fs';
import path from 'node:path';

/**
 * The grpc-health-check-proto plugin: grpc-health-check resolves its proto beside its own
 * source; bundled, it reads proto/ beside the bundle, where `bundle.mjs proto` puts it.
 */
export function grpcHealthCheckProto() {
  return {
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
  };
}

// NestJS's two loggers build an Intl.DateTimeFormat when their module loads, to timestamp lines
// podmin never prints (its processes log through JsonLogger). Creating one maps about 5 MiB of
// ICU data from the node binary into the process (file-backed, so counted in every process's
// RSS) plus the formatter's own memory: measured with bench/agent.mjs, idle RSS of each service
// process fell by ≈ 5.5 MiB (file-backed) when the formatter is created on first format().
/** The lazy-nest-date-format plugin. */
export function lazyNestDateFormat() {
  return {
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
  };
}

// Every agent process loads koffi (libc's madvise, to give back start-up pages:
// libs/agent/data-access-memory), and agent-dataplane calls libbpf through it. koffi's native
// module is a prebuilt .node file per platform, required from koffi's own build/ directory.
// Bundled, those requires point at dist/bin/koffi/<platform>/koffi.node instead, which
// `bundle.mjs proto` copies (Linux x64 and arm64, the node architectures). The committed eBPF
// objects go to dist/bin/bpf/, among agent-dataplane:build's outputs.
/** Points koffi's native requires at `<bin>/koffi/<platform>/koffi.node` beside the bundle. */
export function koffiBesideBundle() {
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
/** The help-layout-fast-paths plugin: FAST_PATHS applied, failing the build where one no longer fits. */
export function helpLayoutFastPaths() {
  return {
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
  };
}

// The CLI carries the OpenTofu/Terraform module: aws-module.ts, which reads infra/aws from the
// checkout when run from source, becomes a module returning those files as string literals.
/** The embed-infra-module plugin, embedding the `.tf` and `.tftpl` files of `dir`; prints how many. */
export function embedInfraModule(dir, label) {
  const files = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((n) => /^[A-Za-z0-9_.-]+\.(?:tf|tftpl)$/.test(n))
    .sort()
    .map((n) => ({ name: n, content: fs.readFileSync(path.join(dir, n), 'utf8') }));
  const plugin = {
    name: 'embed-infra-module',
    setup(b) {
      b.onLoad({ filter: /libs[\\/]cli[\\/]util-infra[\\/]src[\\/]aws-module\.ts$/ }, () => ({
        contents: `export function embeddedAwsModule() { return ${JSON.stringify(files)}.map((f) => ({ ...f })); }\n`,
        loader: 'ts',
      }));
    },
  };
  process.stdout.write(`embedding ${files.length} module file(s) from ${label}\n`);
  return plugin;
}
