// Shared jest settings: swc transpiles TypeScript (decorator metadata on for NestJS), and
// @podmin/* imports resolve to each library's index.ts from tsconfig.base.json paths.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace(/[/\\^$.*+?()[\]{}|-]/g, '\\$&')}$`] = path.join(
    __dirname,
    target,
  );
}

module.exports = {
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleNameMapper,
  clearMocks: true,
};
