// Stand-ins: modules the bundles import at their top level whose real code loads on first use
// (the AWS SDK clients, Node.js built-ins), for start time and memory. Used by bundle.mjs.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { NODE_BUNDLE, require, root } from './common.mjs';

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

/**
 * The lazy-aws-sdk plugin and, once the bundle is written, `embed(file)`, which puts the clients
 * the bundle imported where the marker is (embedAwsClients).
 */
export function lazyAwsSdk() {
  const awsClients = new Set();
  const plugin = {
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
  };
  return { plugin, embed: (file) => embedAwsClients(file, awsClients) };
}

/**
 * Bundles the AWS SDK clients the output imports into one CommonJS program (exports keyed by
 * package name) and puts it, as a string literal, where the lazy-aws-sdk marker is.
 */
async function embedAwsClients(file, awsClients) {
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

// The CLI splits instead (target.awsSdkEntries): each client is an entry point of its own, so
// its code and the SDK code it shares with the other clients are chunks, and the stand-in's
// getters require that entry through the chunk loader. A deploy to a local bucket then loads
// none of it, although the object-store library it opens also holds the S3 store. Each file
// importing a client gets a stand-in of its own with the names it imports (importedNames):
// one with all of client-s3's thousand names cost a deploy to a local bucket 9 M instructions
// to define and as many again for esbuild's __toESM to copy, for the S3 store it never opens.
export const AWS_SDK_ENTRY = 'podmin-aws-sdk-entry:';
export const awsEntryName = (client) => client.replace(/^@aws-sdk\//, 'aws-sdk-');
/** The aws-sdk-entries plugin: each client a stand-in for a CLI entry point of its own. */
export function awsSdkEntries() {
  return {
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
  };
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
/** The lazy-builtins plugin for the built-in modules named in `modules` (without `node:`). */
export function lazyBuiltins(modules) {
  const filter = new RegExp(`^(?:node:)?(?:${modules.join('|')})$`);
  return {
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
  };
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
