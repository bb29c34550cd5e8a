import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const depConstraints = [
  {
    sourceTag: 'type:app',
    onlyDependOnLibsWithTags: [
      'type:provider',
      'type:feature',
      'type:data-access',
      'type:util',
      'type:contract',
    ],
  },
  {
    // A provider composes the CLI's features for one cloud; only the app depends on it.
    sourceTag: 'type:provider',
    onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util', 'type:contract'],
  },
  {
    sourceTag: 'type:feature',
    onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract'],
  },
  {
    sourceTag: 'type:data-access',
    onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract'],
  },
  { sourceTag: 'type:contract', onlyDependOnLibsWithTags: ['type:contract', 'type:util'] },
  {
    sourceTag: 'type:util',
    onlyDependOnLibsWithTags: ['type:util'],
    bannedExternalImports: ['@aws-sdk/*', '@grpc/*'],
  },
  {
    sourceTag: 'type:testing',
    onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:contract', 'type:testing'],
  },
  {
    sourceTag: 'scope:shared',
    onlyDependOnLibsWithTags: ['scope:shared'],
    bannedExternalImports: ['@nestjs/*'],
  },
  {
    sourceTag: 'scope:cli',
    onlyDependOnLibsWithTags: ['scope:cli', 'scope:shared'],
    bannedExternalImports: ['@nestjs/*'],
  },
  { sourceTag: 'scope:agent', onlyDependOnLibsWithTags: ['scope:agent', 'scope:shared'] },
  {
    sourceTag: 'scope:tooling',
    onlyDependOnLibsWithTags: ['scope:tooling', 'scope:shared', 'scope:cli', 'scope:agent'],
  },
];

/** Module-boundary rule; spec files may also import `type:testing` libraries. */
const boundaries = (allowTesting) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: allowTesting
      ? depConstraints.map((c) =>
          c.onlyDependOnLibsWithTags
            ? {
                ...c,
                onlyDependOnLibsWithTags: [
                  ...c.onlyDependOnLibsWithTags,
                  'type:testing',
                  'scope:tooling',
                ],
              }
            : c,
        )
      : depConstraints,
  },
];

export default tseslint.config(
  { ignores: ['**/dist', '**/node_modules', '**/generated/**', '**/*.cjs', '**/*.mjs', 'tmp/**'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(false),
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
      // type:testing libraries are for spec files only (Nx's tag rule would also forbid them
      // transitively through a library's own specs, so the ban is on the import itself).
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@podmin/testing', message: 'only spec files may import the testing library' },
          ],
        },
      ],
    },
  },
  {
    // Tests may use the testing library and loosen a few type-checked rules on fixtures.
    files: [
      '**/*.spec.ts',
      '**/*.integration-spec.ts',
      '**/*.node-spec.ts',
      '**/*.chaos-spec.ts',
      'bench/**/*.ts',
      'tools/**/*.ts',
      '**/e2e/**/*.ts',
      '**/__fixtures__/**/*.ts',
    ],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(true),
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-console': 'off',
    },
  },
);
