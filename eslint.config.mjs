import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const depConstraints = [
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util', 'type:contract'] },
  { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract'] },
  { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract'] },
  { sourceTag: 'type:contract', onlyDependOnLibsWithTags: ['type:contract', 'type:util'] },
  {
    sourceTag: 'type:util',
    onlyDependOnLibsWithTags: ['type:util'],
    bannedExternalImports: ['@aws-sdk/*', '@grpc/*'],
  },
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract', 'type:testing'] },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'], bannedExternalImports: ['@nestjs/*'] },
  { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:cli', 'scope:shared'], bannedExternalImports: ['@nestjs/*'] },
  { sourceTag: 'scope:agent', onlyDependOnLibsWithTags: ['scope:agent', 'scope:shared'] },
  { sourceTag: 'scope:tooling', onlyDependOnLibsWithTags: ['scope:tooling', 'scope:shared', 'scope:cli', 'scope:agent'] },
];

/** Module-boundary rule; only spec files may import `type:testing` libraries. */
const boundaries = (allowTesting) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: allowTesting
      ? depConstraints.map((c) =>
          c.onlyDependOnLibsWithTags
            ? { ...c, onlyDependOnLibsWithTags: [...c.onlyDependOnLibsWithTags, 'type:testing', 'scope:tooling'] }
            : c,
        )
      : [...depConstraints, { sourceTag: '*', notDependOnLibsWithTags: ['type:testing'] }],
  },
];

export default tseslint.config(
  { ignores: ['**/dist', '**/node_modules', '**/generated/**', '**/*.cjs', '**/*.mjs', 'tmp/**'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(false),
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // Tests may use the testing library and loosen a few type-checked rules on fixtures.
    files: ['**/*.spec.ts', '**/*.integration-spec.ts', 'bench/**/*.ts', 'tools/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(true),
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-console': 'off',
    },
  },
);
