// The floor under `podmin validate`'s start: the least a CLI built on the two packages the user
// named for it (yargs, yaml) does to validate a manifest, with none of podmin's code. Bundled
// into one file by esbuild and run through a V8 code cache written at its first exit, as
// tools/scripts/bundle.mjs ships the CLI, so it starts the fastest way podmin could. Three
// programs: yargs and yaml together (the floor), and each alone (where the floor goes).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(import.meta.dirname, '../..');

const PROGRAMS = {
  // One command with one demanded option, parsed strictly with --help; every document of the
  // file parsed and turned into plain data.
  'yargs + yaml': `
const yargs = require('yargs/yargs');
const YAML = require('yaml');
const fs = require('node:fs');
yargs(process.argv.slice(2))
  .command('validate', 'Validate a manifest', (y) => y.option('file', { alias: 'f', type: 'string', demandOption: true }), (a) => {
    const docs = YAML.parseAllDocuments(fs.readFileSync(a.file, 'utf8'));
    for (const d of docs) if (d.errors.length > 0) throw d.errors[0];
    process.stdout.write('valid: ' + docs.map((d) => d.toJS().kind).join(', ') + '\\n');
  })
  .strict().help().parse();
`,
  'yargs alone': `
require('yargs/yargs')(process.argv.slice(2))
  .command('validate', 'Validate a manifest', (y) => y.option('file', { alias: 'f', type: 'string', demandOption: true }), (a) => {
    process.stdout.write('valid: ' + a.file + '\\n');
  })
  .strict().help().parse();
`,
  'yaml alone': `
const YAML = require('yaml');
const docs = YAML.parseAllDocuments(require('node:fs').readFileSync(process.argv.at(-1), 'utf8'));
for (const d of docs) if (d.errors.length > 0) throw d.errors[0];
process.stdout.write('valid: ' + docs.map((d) => d.toJS().kind).join(', ') + '\\n');
`,
};

// The launcher: podmin's own technique (one vm.Script, its code cache written at exit).
const LAUNCHER = `"use strict";
const fs = require("node:fs"), vm = require("node:vm"), Module = require("node:module");
const file = __dirname + "/program.cjs", cacheFile = __dirname + "/program.v8";
let cachedData;
try { cachedData = fs.readFileSync(cacheFile); } catch {}
const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData });
if (cachedData === undefined || script.cachedDataRejected)
  process.once("exit", () => fs.writeFileSync(cacheFile, script.createCachedData()));
const mod = { exports: {} };
script.runInThisContext().call(mod.exports, mod.exports, require, mod, file, __dirname);
`;

/**
 * Builds the floor programs below `dir` and returns, for each, its name and the node arguments
 * that run it on `file` the way `podmin validate -f FILE` is run (`launcher validate -f FILE`).
 */
export function floorPrograms(dir, file) {
  const esbuild = createRequire(path.join(root, 'package.json'))('esbuild');
  const programs = [];
  for (const [name, source] of Object.entries(PROGRAMS)) {
    const at = path.join(dir, name.replace(/[^a-z]+/g, '-'));
    fs.mkdirSync(at, { recursive: true });
    fs.writeFileSync(path.join(at, 'source.cjs'), source);
    esbuild.buildSync({
      entryPoints: [path.join(at, 'source.cjs')],
      outfile: path.join(at, 'program.cjs'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      minify: true,
      nodePaths: [path.join(root, 'node_modules')],
      logLevel: 'warning',
    });
    fs.writeFileSync(path.join(at, 'launcher.cjs'), LAUNCHER);
    programs.push({ name, args: [path.join(at, 'launcher.cjs'), 'validate', '-f', file] });
  }
  return programs;
}
