#!/usr/bin/env node
// Writes the tfvars files of infra/aws/test/cases.json into a directory, for tools/infra-tier.sh:
//   combo-<name>.tfvars.json, good-<name>.tfvars.json, bad-<name>.tfvars.json + bad-<name>.expect
// A case patches the base: top-level keys replace the base's, and "nodegroup" merges into the
// base's one NodeGroup. A user_data of "@random:N" becomes N incompressible characters.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [out] = process.argv.slice(2);
if (!out) {
  process.stderr.write('usage: write-cases.mjs <out-dir>\n');
  process.exit(2);
}
const cases = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'cases.json'), 'utf8'));
const slug = (name) => name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();

function apply(patch) {
  const vars = structuredClone(cases.base);
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'nodegroup') {
      Object.assign(vars.nodegroups.default, value);
    } else {
      vars[key] = value;
    }
  }
  for (const ng of Object.values(vars.nodegroups)) {
    const random = /^@random:(\d+)$/.exec(ng.user_data ?? '');
    if (random)
      ng.user_data = crypto
        .randomBytes(Number(random[1]))
        .toString('base64')
        .slice(0, Number(random[1]));
  }
  return vars;
}

fs.mkdirSync(out, { recursive: true });
const write = (file, vars) =>
  fs.writeFileSync(path.join(out, file), `${JSON.stringify(vars, null, 2)}\n`);
for (const [name, patch] of Object.entries(cases.combos))
  write(`combo-${slug(name)}.tfvars.json`, apply(patch));
for (const [name, patch] of Object.entries(cases.good))
  write(`good-${slug(name)}.tfvars.json`, apply(patch));
for (const [name, { patch, error }] of Object.entries(cases.bad)) {
  write(`bad-${slug(name)}.tfvars.json`, apply(patch));
  fs.writeFileSync(path.join(out, `bad-${slug(name)}.expect`), `${error}\n`);
}
