#!/usr/bin/env node
// Scaffolds a TypeScript project in the house layout:
//   node tools/scripts/new-project.mjs libs/shared/util-manifest util-manifest scope:shared type:util
// Writes project.json, tsconfig.json, jest configs, src/index.ts and README.md, and registers
// the @podmin/<name> path in tsconfig.base.json.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [dir, name, ...tags] = process.argv.slice(2);
if (!dir || !name || tags.length === 0) {
  process.stderr.write('usage: new-project.mjs <dir> <name> <tag>...\n');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '../..');
const abs = path.join(root, dir);
const up = path.relative(abs, root) || '.';
const isApp = tags.includes('type:app');
fs.mkdirSync(path.join(abs, 'src'), { recursive: true });

const write = (file, content) => {
  const p = path.join(abs, file);
  if (!fs.existsSync(p)) fs.writeFileSync(p, content);
};
const json = (v) => JSON.stringify(v, null, 2) + '\n';

write(
  'project.json',
  json({
    name,
    $schema: `${up}/node_modules/nx/schemas/project-schema.json`,
    sourceRoot: `${dir}/src`,
    projectType: isApp ? 'application' : 'library',
    tags,
    targets: {
      lint: { executor: '@nx/eslint:lint', options: { maxWarnings: 0 } },
      typecheck: {
        executor: 'nx:run-commands',
        options: { command: `tsc -p ${dir}/tsconfig.json --noEmit` },
      },
      test: {
        executor: '@nx/jest:jest',
        outputs: [],
        options: { jestConfig: `${dir}/jest.config.cjs`, passWithNoTests: false },
      },
      integration: {
        executor: '@nx/jest:jest',
        outputs: [],
        options: {
          jestConfig: `${dir}/jest.integration.config.cjs`,
          passWithNoTests: true,
          runInBand: true,
        },
      },
    },
  }),
);
write(
  'tsconfig.json',
  json({
    extends: `${up}/tsconfig.base.json`,
    compilerOptions: { types: ['node', 'jest'] },
    include: ['src/**/*.ts'],
  }),
);
write(
  'jest.config.cjs',
  `module.exports = {\n  displayName: '${name}',\n  preset: '${up}/jest.preset.cjs',\n  rootDir: __dirname,\n  testMatch: ['<rootDir>/src/**/*.spec.ts'],\n};\n`,
);
write(
  'jest.integration.config.cjs',
  `module.exports = {\n  displayName: '${name}:integration',\n  preset: '${up}/jest.preset.cjs',\n  rootDir: __dirname,\n  testMatch: ['<rootDir>/src/**/*.integration-spec.ts'],\n  testTimeout: 60000,\n};\n`,
);
write('src/index.ts', '');
write('README.md', `# @podmin/${name}\n\n`);

if (!isApp) {
  const basePath = path.join(root, 'tsconfig.base.json');
  const base = JSON.parse(fs.readFileSync(basePath, 'utf8'));
  base.compilerOptions.paths[`@podmin/${name}`] = [`${dir}/src/index.ts`];
  base.compilerOptions.paths = Object.fromEntries(
    Object.entries(base.compilerOptions.paths).sort(([a], [b]) => a.localeCompare(b)),
  );
  fs.writeFileSync(basePath, json(base));
}
// Keep generated files in the house format.
execFileSync(path.join(root, 'node_modules/.bin/prettier'), [
  '--log-level',
  'warn',
  '--write',
  abs,
  path.join(root, 'tsconfig.base.json'),
]);
process.stdout.write(`created ${dir} (@podmin/${name})\n`);
